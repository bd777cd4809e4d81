/** How the stager spells values in staging files (src/store/tables.ts). */
import { encodeList } from '../../store/tables';
import { isoOf } from '../format';

export const EMPTY_LIST = '[]';

/** A number, or empty for none (NaN). */
export function num(v: number): string {
  return Number.isNaN(v) ? '' : String(v);
}

/** numberText's cache has 2^NUMBER_TEXT_BITS slots, chosen by the top bits of a hash of the number. */
const NUMBER_TEXT_BITS = 12;
const NUMBER_TEXT_SLOTS = 1 << NUMBER_TEXT_BITS;
const numberTextKey = new Float64Array(NUMBER_TEXT_SLOTS).fill(NaN);
const numberTextValue: string[] = new Array<string>(NUMBER_TEXT_SLOTS).fill('');
const numberBits = new Float64Array(1);
const numberWords = new Uint32Array(numberBits.buffer);

/**
 * `String(v)`, from a small cache of the numbers last written. Confidence scores take a few thousand
 * values across millions of rows, and V8 turns a fraction into its shortest text in about half a
 * microsecond: at 1M companies `String` of the relationships' scores took 2.5 s of the staging's CPU.
 * A slot holds the number it was made for, compared exactly (0 and -0, equal here, have one text).
 */
export function numberText(v: number): string {
  numberBits[0] = v;
  const slot = Math.imul(numberWords[0]! ^ numberWords[1]!, 0x9e3779b1) >>> (32 - NUMBER_TEXT_BITS);
  if (numberTextKey[slot] === v) return numberTextValue[slot]!;
  const text = String(v);
  numberTextKey[slot] = v;
  numberTextValue[slot] = text;
  return text;
}

/** An instant in ms as ISO text, or empty for none (NaN). */
export function iso(ms: number): string {
  return Number.isNaN(ms) ? '' : isoOf(ms);
}

/** A staged list field: the list literal. */
export function listField(items: readonly string[]): string {
  return encodeList(items);
}

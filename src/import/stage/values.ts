/** How the stager spells values in staging files (src/store/tables.ts). */
import { encodeList } from '../../store/tables';
import { isoOf } from '../format';

export const EMPTY_LIST = '[]';

/** A number, or empty for none (NaN). */
export function num(v: number): string {
  return Number.isNaN(v) ? '' : String(v);
}

/** An instant in ms as ISO text, or empty for none (NaN). */
export function iso(ms: number): string {
  return Number.isNaN(ms) ? '' : isoOf(ms);
}

/** A staged list field: the list literal. */
export function listField(items: readonly string[]): string {
  return encodeList(items);
}

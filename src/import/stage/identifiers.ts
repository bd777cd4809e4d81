/** identifiers.csv: identifiers of companies, staged as JSON on the Company row. */
import { jsonString } from '../evidence-buckets';
import { ValueError, checkId, checkIdentifierValue, normIdentifierType } from '../format';
import { need, readInputFile } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';
import { EMPTY_LIST } from './values';

export async function stageIdentifiers(state: StageState): Promise<void> {
  state.identifierHead = new Int32Array(state.vids.size).fill(-1);
  await readInputFile(state, 'identifiers', (ix) => identifierHandler(state, ix));
}

function identifierHandler(state: StageState, ix: (c: string) => number): RowHandler {
  const cVid = ix('vid');
  const cType = ix('type');
  const cValue = ix('value');
  const h: RowHandler = {
    at: '',
    row: (f, line) => {
      h.at = 'vid';
      const vid = checkId(need(f, cVid));
      const ci = state.company(vid);
      h.at = 'type';
      const type = normIdentifierType(need(f, cType));
      h.at = 'value';
      const value = checkIdentifierValue(type, need(f, cValue));
      h.at = '';
      const key = `${type}:${value}`;
      let keyNo = state.identifierKeys.get(key);
      if (keyNo >= 0) {
        for (let p = state.identifierHead[ci] as number; p >= 0; p = state.identifierNext.get(p)) {
          if (state.identifierKeyNo.get(p) === keyNo) {
            throw new ValueError(
              `duplicate identifier ${key} for "${vid}" (first at line ${state.identifierLine.get(p)})`,
            );
          }
        }
      } else {
        keyNo = state.identifierKeys.commit(key);
      }
      state.identifierNext.push(state.identifierHead[ci] as number);
      state.identifierHead[ci] = state.identifierKeyNo.n;
      state.identifierKeyNo.push(keyNo);
      state.identifierLine.push(line);
      state.items.identifiers++;
    },
  };
  return h;
}

/** The identifiers of company i as a staged JSON field, sorted by type, then value. */
export function identifiersField(state: StageState, i: number): string {
  let p = state.identifierHead[i] as number;
  if (p < 0) return EMPTY_LIST;
  const keys: string[] = [];
  for (; p >= 0; p = state.identifierNext.get(p))
    keys.push(state.identifierKeys.key(state.identifierKeyNo.get(p)));
  // Sorting `type:value` keys sorts by type, then value: no type name is a prefix of another.
  if (keys.length > 1) keys.sort();
  let out = '[';
  for (let j = 0; j < keys.length; j++) {
    const key = keys[j] as string;
    const colon = key.indexOf(':');
    out += `${j === 0 ? '' : ','}{"type":"${key.slice(0, colon)}","value":${jsonString(key.slice(colon + 1))}}`;
  }
  return `${out}]`;
}

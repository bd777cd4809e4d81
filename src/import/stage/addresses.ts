/** addresses.csv: addresses of companies, staged as JSON on the Company row. */
import { jsonText } from '../evidence-buckets';
import { INPUT_FILES, ValueError, checkId, checkName, checkText } from '../format';
import { need, readInputFile, val } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';
import { EMPTY_LIST } from './values';

/** Separates the fields of an address in memory; validated values never hold control characters. */
const ADDRESS_SEP = '\u0000';

export async function stageAddresses(state: StageState): Promise<void> {
  state.addressHead = new Int32Array(state.vids.size).fill(-1);
  state.addressTail = new Int32Array(state.vids.size).fill(-1);
  await readInputFile(state, 'addresses', (ix) => addressHandler(state, ix));
}

function addressHandler(state: StageState, ix: (c: string) => number): RowHandler {
  const cVid = ix('vid');
  const cLine = ix('address_line');
  const cCity = ix('city');
  const cRegion = ix('region');
  const cPostal = ix('postal_code');
  const cCountry = ix('country');
  const cType = ix('type');
  const h: RowHandler = {
    at: '',
    row: (f, at) => {
      h.at = 'vid';
      const vid = checkId(need(f, cVid));
      const ci = state.company(vid);
      h.at = 'address_line';
      const line = checkText(val(f, cLine));
      h.at = 'city';
      const city = checkName(val(f, cCity));
      h.at = 'region';
      const region = checkName(val(f, cRegion));
      h.at = 'postal_code';
      const postal = checkName(val(f, cPostal));
      h.at = 'country';
      let s = val(f, cCountry);
      const country = s === '' ? '' : state.countryField(INPUT_FILES.addresses.file, at, 'country', s);
      h.at = 'type';
      s = val(f, cType);
      const type = s === '' ? '' : state.token(s);
      h.at = '';
      if (line === '' && city === '' && region === '' && postal === '' && country === '') {
        throw new ValueError('address has no values');
      }
      const S = ADDRESS_SEP;
      const a = state.addresses.push(`${line}${S}${city}${S}${region}${S}${postal}${S}${country}${S}${type}`);
      state.addressNext.push(-1);
      const tail = state.addressTail[ci] as number;
      if (tail < 0) state.addressHead[ci] = a;
      else state.addressNext.set(tail, a);
      state.addressTail[ci] = a;
      state.items.addresses++;
    },
  };
  return h;
}

/** The addresses of company i as a staged JSON field, in file order. */
export function addressesField(state: StageState, i: number): string {
  let p = state.addressHead[i] as number;
  if (p < 0) return EMPTY_LIST;
  let out = '[';
  for (let first = true; p >= 0; p = state.addressNext.get(p), first = false) {
    const f = state.addresses.text(p).split(ADDRESS_SEP) as [string, string, string, string, string, string];
    out += `${first ? '' : ','}{"address_line":${jsonText(f[0])},"city":${jsonText(f[1])},"region":${jsonText(f[2])},"postal_code":${jsonText(f[3])},"country":${jsonText(f[4])},"type":${jsonText(f[5])}}`;
  }
  return `${out}]`;
}

/** companies.csv: one row per company; the other files refer to companies by vid. */
import { stagedNamesLine } from '../../store/staged-search-rows';
import { encodeTextList, stagedText } from '../../store/tables';
import { TextBuffer } from '../csv';
import type { CompanySink } from '../stage-result';
import {
  DATE_RANGE,
  OLD_DATE_RANGE,
  ValueError,
  refuseIdOfRejected,
  checkId,
  checkName,
  checkPhone,
  checkText,
  checkToken,
  isId,
  isoOf,
  normBoolean,
  normDomain,
  normAliases,
  normCodeSystem,
  normList,
  normWebsite,
  INPUT_FILES,
} from '../format';
import { need, readInputFile, val } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';
import { EMPTY_LIST, listField } from './values';

/** Bytes of names handed to a CompanySink at a time. */
const NAMES_BYTES = 1 << 20;

export async function stageCompanies(state: StageState, sink?: CompanySink): Promise<void> {
  const names = sink?.names
    ? { sink: sink.names.bind(sink), text: new TextBuffer(NAMES_BYTES + 4096) }
    : null;
  await readInputFile(state, 'companies', (ix) => companyHandler(state, ix, names));
  if (names && names.text.size > 0) names.sink(names.text.take());
}

function companyHandler(
  state: StageState,
  ix: (c: string) => number,
  names: { sink: (text: Buffer) => void; text: TextBuffer } | null,
): RowHandler {
  const cVid = ix('vid');
  const cName = ix('name');
  const cLegal = ix('company_legal_name');
  const cDesc = ix('description');
  const cDomains = ix('domains');
  const cWebsites = ix('websites');
  const cDom = ix('domiciled_country');
  const cInc = ix('incorporated_country');
  const cIncDate = ix('incorporation_date');
  const cIpo = ix('ipo_date');
  const cActive = ix('is_active');
  const cPublic = ix('is_public');
  const cFf = ix('is_freight_forwarder');
  const cPhone = ix('hq_phone_number');
  const cAliases = ix('aliases');
  const cIndustry = ix('industry');
  const cCodeSystem = ix('industry_code_system');
  const cCode = ix('industry_code');
  let vid = '';
  const h: RowHandler = {
    at: '',
    row: (f, line) => {
      vid = '';
      h.at = 'vid';
      const v = checkId(need(f, cVid));
      const first = state.vids.get(v);
      if (first >= 0) {
        h.at = '';
        throw new ValueError(`duplicate vid "${v}" (first at line ${state.companyLine.get(first)})`);
      }
      h.at = '';
      refuseIdOfRejected(state.rejectedCompanies, 'vid', v);
      vid = v;
      h.at = 'name';
      const name = checkName(need(f, cName));
      h.at = 'company_legal_name';
      const legal = checkName(val(f, cLegal));
      h.at = 'description';
      const desc = checkText(val(f, cDesc));
      h.at = 'domains';
      let s = val(f, cDomains);
      const domains = s === '' ? EMPTY_LIST : listField(normList(s, normDomain));
      h.at = 'websites';
      s = val(f, cWebsites);
      const websites = s === '' ? EMPTY_LIST : listField(normList(s, normWebsite));
      h.at = 'domiciled_country';
      s = val(f, cDom);
      const dom =
        s === '' ? '' : state.countryField(INPUT_FILES.companies.file, line, 'domiciled_country', s);
      h.at = 'incorporated_country';
      s = val(f, cInc);
      const inc =
        s === '' ? '' : state.countryField(INPUT_FILES.companies.file, line, 'incorporated_country', s);
      h.at = 'incorporation_date';
      s = val(f, cIncDate);
      const incDate = s === '' ? '' : isoOf(state.dates.parse(s, OLD_DATE_RANGE));
      h.at = 'ipo_date';
      s = val(f, cIpo);
      const ipo = s === '' ? '' : isoOf(state.dates.parse(s, DATE_RANGE));
      h.at = 'is_active';
      s = val(f, cActive);
      const active = s === '' ? '' : normBoolean(s);
      h.at = 'is_public';
      s = val(f, cPublic);
      const pub = s === '' ? '' : normBoolean(s);
      h.at = 'is_freight_forwarder';
      s = val(f, cFf);
      const ff = s === '' ? '' : normBoolean(s);
      h.at = 'hq_phone_number';
      s = val(f, cPhone);
      const phone = s === '' ? '' : checkPhone(s);
      h.at = 'aliases';
      s = val(f, cAliases);
      const aliases = s === '' ? EMPTY_LIST : encodeTextList(normAliases(s));
      h.at = 'industry';
      const industry = checkName(val(f, cIndustry));
      h.at = 'industry_code_system';
      s = val(f, cCodeSystem);
      const codeSystem = s === '' ? '' : normCodeSystem(s);
      h.at = 'industry_code';
      s = val(f, cCode);
      const code = s === '' ? '' : checkToken(s);
      h.at = '';
      if ((codeSystem === '') !== (code === ''))
        throw new ValueError('industry_code and industry_code_system are given together or not at all');
      state.vids.commit(v);
      state.companyLine.push(line);
      const stagedName = stagedText(name);
      if (names) {
        names.text.write(stagedNamesLine(stagedName, aliases));
        if (names.text.size >= NAMES_BYTES) names.sink(names.text.take());
      }
      state.companyMid.push(
        `${stagedName}\t${stagedText(legal)}\t${stagedText(desc)}\t${domains}\t${websites}\t${dom}\t${inc}\t${incDate}\t${ipo}\t${active}\t${pub}\t${ff}\t${stagedText(phone)}`,
      );
      state.companyTail.push(
        `${aliases}\t${stagedText(industry)}\t${stagedText(codeSystem)}\t${stagedText(code)}`,
      );
    },
    onReject: (line) => {
      if (vid !== '' && !state.rejectedCompanies.has(vid)) state.rejectedCompanies.set(vid, line);
    },
    onRejectRaw: (f, line) => {
      const v = val(f, cVid);
      if (isId(v) && state.vids.get(v) < 0 && !state.rejectedCompanies.has(v))
        state.rejectedCompanies.set(v, line);
    },
  };
  return h;
}

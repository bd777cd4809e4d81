/** relationships.csv: supplier → customer relationships, kept column-wise in EdgeStore until the derive step. */
import {
  DATE_RANGE,
  DEFAULT_LABEL,
  ValueError,
  refuseIdOfRejected,
  checkHsCode,
  checkId,
  isId,
  normList,
  parseConfidence,
} from '../format';
import { need, readInputFile, val } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';
import { EMPTY_LIST, listField } from './values';

export async function stageRelationships(state: StageState): Promise<void> {
  await readInputFile(state, 'relationships', (ix) => relationshipHandler(state, ix));
}

function relationshipHandler(state: StageState, ix: (c: string) => number): RowHandler {
  const cId = ix('edge_id');
  const cSup = ix('supplier_id');
  const cCus = ix('customer_id');
  const cConf = ix('confidence_score');
  const cLabel = ix('label');
  const cStatus = ix('status_code');
  const cLatest = ix('latest_edge_date');
  const cLatestFin = ix('latest_finalized_edge_date');
  const cLastMod = ix('last_modified_on');
  const cHs = ix('hs_codes');
  const E = state.edges;
  const dates = state.dates;
  const defaultLabel = state.labels.add(DEFAULT_LABEL);
  let edgeId = '';
  let lastSupVid = '';
  let lastSup = -1;
  const h: RowHandler = {
    at: '',
    row: (f, line) => {
      edgeId = '';
      h.at = 'edge_id';
      const id = checkId(need(f, cId));
      const first = state.edgeIds.get(id);
      if (first >= 0) {
        h.at = '';
        throw new ValueError(`duplicate edge_id "${id}" (first at line ${E.line[first]})`);
      }
      h.at = '';
      refuseIdOfRejected(state.rejectedEdges, 'edge_id', id);
      edgeId = id;
      h.at = 'supplier_id';
      const supVid = need(f, cSup);
      // Files are often grouped by supplier: skip the lookup when it repeats.
      let sup = lastSup;
      if (supVid !== lastSupVid) {
        sup = state.company(checkId(supVid));
        lastSupVid = supVid;
        lastSup = sup;
      }
      h.at = 'customer_id';
      const cus = state.company(checkId(need(f, cCus)));
      if (sup === cus) {
        h.at = '';
        throw new ValueError('supplier_id equals customer_id (self-relationship)');
      }
      h.at = 'confidence_score';
      const conf = parseConfidence(need(f, cConf));
      h.at = 'label';
      let s = val(f, cLabel);
      const label = s === '' ? defaultLabel : state.labels.add(state.token(s));
      h.at = 'status_code';
      s = val(f, cStatus);
      const status = s === '' ? NaN : Number(state.integer(s));
      h.at = 'latest_edge_date';
      s = val(f, cLatest);
      const latest = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = 'latest_finalized_edge_date';
      s = val(f, cLatestFin);
      const latestFin = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = 'last_modified_on';
      s = val(f, cLastMod);
      const lastMod = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = 'hs_codes';
      s = val(f, cHs);
      const hs = s === '' ? EMPTY_LIST : listField(normList(s, checkHsCode));
      h.at = '';
      state.edgeIds.commit(id);
      const e = E.next();
      E.sup[e] = sup;
      E.cus[e] = cus;
      E.conf[e] = conf;
      E.label[e] = label;
      E.status[e] = status;
      E.latest[e] = latest;
      E.latestFin[e] = latestFin;
      E.lastMod[e] = lastMod;
      E.evMax[e] = NaN;
      E.evMaxFin[e] = NaN;
      E.line[e] = line;
      E.hs.push(hs);
    },
    onReject: (line) => {
      if (edgeId !== '' && !state.rejectedEdges.has(edgeId)) state.rejectedEdges.set(edgeId, line);
    },
    onRejectRaw: (f, line) => {
      const id = val(f, cId);
      if (isId(id) && state.edgeIds.get(id) < 0 && !state.rejectedEdges.has(id))
        state.rejectedEdges.set(id, line);
    },
  };
  return h;
}

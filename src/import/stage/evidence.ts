/**
 * evidence.csv: evidence items of relationships. Each item goes to the
 * evidence sink, which later writes it into its Edge row; the edge keeps only
 * the summaries the derive step needs (count, latest dates, types).
 */
import { bucketCount, evidenceWorkerAvailable, openEvidenceSink } from '../evidence-buckets';
import type { EvidenceSink } from '../evidence-buckets';
import {
  DATE_RANGE,
  INPUT_FILES,
  ValueError,
  checkId,
  checkText,
  checkUrl,
  refuseIdOfRejected,
  excerpt,
  isId,
  normBoolean,
  urlHost,
} from '../format';
import { fingerprint } from '../string-index';
import { need, readInputFile, val } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';
import { listField } from './values';

/** Fewest relationships for which the evidence worker thread pays off. */
const EVIDENCE_WORKER_FROM = 50000;

/** Reads evidence.csv, a second time with exact duplicate checks when the fast pass may have seen one. */
export async function stageEvidence(state: StageState, worker: boolean | undefined): Promise<void> {
  const n = state.edges.n;
  state.nBuckets = bucketCount(n);
  state.evidence = await openEvidenceSink(
    state.stagingDir,
    state.nBuckets,
    n,
    worker ?? (n >= EVIDENCE_WORKER_FROM && evidenceWorkerAvailable()),
  );
  await readInputFile(state, 'evidence', (ix) => evidenceHandler(state, ix));
  if (duplicateFingerprints(state)) {
    await resetEvidence(state);
    state.evidenceExact = true;
    await readInputFile(state, 'evidence', (ix) => evidenceHandler(state, ix));
  }
  await state.evidence.seal();
}

function evidenceHandler(state: StageState, ix: (c: string) => number): RowHandler {
  const cId = ix('id');
  const cEdge = ix('edge_id');
  const cDate = ix('date');
  const cType = ix('type');
  const cUrl = ix('url');
  const cDomain = ix('domain');
  const cStatus = ix('status_id');
  const cByCustomer = ix('provided_by_customer');
  const cMeta = ix('metadata');
  const cFin = ix('finalised_on');
  const cCreated = ix('created_on');
  const cMod = ix('last_modified_on');
  const E = state.edges;
  const dates = state.dates;
  const sink = state.evidence as EvidenceSink;
  const items = state.items;
  let lastEdgeId = '';
  let lastEdge = -1;
  const exact = state.evidenceExact;
  /** The id of the row being read once its duplicate checks passed, else ''. */
  let evidenceId = '';
  const h: RowHandler = {
    at: '',
    row: (f, line) => {
      evidenceId = '';
      h.at = 'id';
      const id = checkId(need(f, cId));
      if (exact) {
        const first = state.evidenceIds.get(id);
        if (first >= 0) {
          h.at = '';
          throw new ValueError(
            `duplicate evidence id "${id}" (first at line ${state.evidenceLine.get(first)})`,
          );
        }
      }
      h.at = '';
      refuseIdOfRejected(state.rejectedEvidence, 'evidence id', id);
      evidenceId = id;
      h.at = 'edge_id';
      const edgeId = need(f, cEdge);
      // Evidence usually comes grouped by edge: skip the lookup when it repeats.
      let e = lastEdge;
      if (edgeId !== lastEdgeId) {
        checkId(edgeId);
        e = state.edgeIds.get(edgeId);
        if (e < 0) {
          const rl = state.rejectedEdges.get(edgeId);
          if (rl !== undefined)
            throw new ValueError(`edge "${edgeId}" was rejected (relationships.csv line ${rl})`);
          throw new ValueError(`unknown edge ${excerpt(edgeId)}`);
        }
        lastEdgeId = edgeId;
        lastEdge = e;
      }
      h.at = 'date';
      const date = dates.parse(need(f, cDate), DATE_RANGE);
      h.at = 'type';
      const type = val(f, cType);
      if (type !== '') state.evidenceType(type);
      h.at = 'url';
      const url = val(f, cUrl);
      if (url !== '') checkUrl(url);
      h.at = 'domain';
      let s = val(f, cDomain);
      const domain = s !== '' ? state.domain(s) : url !== '' ? urlHost(url) : '';
      h.at = 'status_id';
      s = val(f, cStatus);
      const status = s === '' ? '' : state.integer(s);
      h.at = 'provided_by_customer';
      s = val(f, cByCustomer);
      const byCustomer = s === '' ? '' : normBoolean(s);
      h.at = 'metadata';
      const meta = checkText(val(f, cMeta));
      h.at = 'finalised_on';
      s = val(f, cFin);
      const fin = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = 'created_on';
      s = val(f, cCreated);
      const created = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = 'last_modified_on';
      s = val(f, cMod);
      const mod = s === '' ? NaN : dates.parse(s, DATE_RANGE);
      h.at = '';
      if (exact) {
        state.evidenceIds.commit(id);
        state.evidenceLine.push(line);
      } else {
        if (state.evidenceFpCount === state.evidenceFp.length) {
          const b = new Float64Array(state.evidenceFp.length * 2);
          b.set(state.evidenceFp);
          state.evidenceFp = b;
        }
        state.evidenceFp[state.evidenceFpCount++] = fingerprint(id);
      }
      sink.lines.add(e, date, id, type, url, domain, status, byCustomer, meta, fin, created, mod);
      items.evidence++;
      E.evCount[e] = (E.evCount[e] as number) + 1;
      if (!(date <= (E.evMax[e] as number))) E.evMax[e] = date;
      if (!Number.isNaN(fin) && !(fin <= (E.evMaxFin[e] as number))) E.evMaxFin[e] = fin;
      if (type !== '') addType(state, e, type);
    },
    onReject: (line) => {
      if (evidenceId !== '' && !state.rejectedEvidence.has(evidenceId))
        state.rejectedEvidence.set(evidenceId, line);
    },
    onRejectRaw: (f, line) => {
      // Without the exact pass's ids an accepted one cannot be told apart here; a later row
      // with this id is then refused as a duplicate either way.
      const id = val(f, cId);
      if (isId(id) && !state.rejectedEvidence.has(id)) state.rejectedEvidence.set(id, line);
    },
  };
  return h;
}

/** Whether two evidence ids of the fast pass may be equal. */
function duplicateFingerprints(state: StageState): boolean {
  const fp = state.evidenceFp.subarray(0, state.evidenceFpCount).sort();
  for (let i = 1; i < fp.length; i++) if (fp[i] === fp[i - 1]) return true;
  return false;
}

/** Forgets everything the evidence file contributed, for a second, exact pass. */
async function resetEvidence(state: StageState): Promise<void> {
  await state.evidence?.reset();
  state.items.evidence = 0;
  const E = state.edges;
  E.evCount.fill(0);
  E.evTypes.fill(0);
  E.evMax.fill(NaN);
  E.evMaxFin.fill(NaN);
  state.extraTypes.clear();
  const file = INPUT_FILES.evidence.file;
  for (let i = state.rejected.length - 1; i >= 0; i--)
    if (state.rejected[i]?.file === file) state.rejected.splice(i, 1);
  state.evidenceFp = new Float64Array(0);
  state.evidenceFpCount = 0;
  state.rejectedEvidence.clear();
}

function addType(state: StageState, e: number, type: string): void {
  const bit = state.typeBits.add(type);
  if (bit < 30) {
    state.edges.evTypes[e] = (state.edges.evTypes[e] as number) | (1 << bit);
    return;
  }
  let set = state.extraTypes.get(e);
  if (set === undefined) {
    set = new Set();
    state.extraTypes.set(e, set);
  }
  set.add(type);
}

/** Evidence types (a bit set plus rare extras), sorted, as a staging list field. */
export function typesField(state: StageState, mask: number, extra: Set<string> | undefined): string {
  let text = extra === undefined ? state.typesCache.get(mask) : undefined;
  if (text !== undefined) return text;
  const names = new Set<string>(extra);
  for (let b = 0; b < 30; b++) if ((mask & (1 << b)) !== 0) names.add(state.typeBits.key(b));
  text = listField([...names].sort());
  if (extra === undefined) state.typesCache.set(mask, text);
  return text;
}

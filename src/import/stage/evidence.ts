/**
 * evidence.csv: evidence items of relationships. Each item goes to the
 * evidence sink, which later writes it into its Edge row; the edge keeps only
 * the summaries the derive step needs (count, latest dates, types).
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { workerFileAvailable } from '../../worker-file';
import { CsvFatalError } from '../csv';
import type { CsvRangeEnd } from '../csv';
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
import { STAGE_YOUNG_GENERATION_MB } from './state';
import type { StageState } from './state';
import { listField } from './values';
import type {
  EvidenceHalfData,
  EvidenceHalfReply,
  EvidenceHalfRequest,
  EvidenceHalfResult,
} from './evidence-half-messages';

/** Fewest relationships for which the evidence worker thread pays off. */
const EVIDENCE_WORKER_FROM = 50000;

/** Smallest evidence.csv read by two threads at once, in bytes. */
const SPLIT_FROM_BYTES = 32 << 20;
/** Share of evidence.csv the staging thread reads itself when another thread reads the rest. */
const SPLIT_SHARE = 0.5;
/** Furthest the line break after a split's guessed offset is looked for. */
const SPLIT_SEARCH_BYTES = 8 << 20;

/**
 * Reads evidence.csv, a second time with exact duplicate checks when the fast pass may have seen one.
 * `split`: read the file's second part on another thread, from the first line after this byte
 * offset (true: about half way; default: when the file is large and the threads are there).
 */
export async function stageEvidence(
  state: StageState,
  worker: boolean | undefined,
  split?: boolean | number,
): Promise<void> {
  const n = state.edges.n;
  state.nBuckets = bucketCount(n);
  state.evidence = await openEvidenceSink(
    state.stagingDir,
    state.nBuckets,
    n,
    worker ?? (n >= EVIDENCE_WORKER_FROM && evidenceWorkerAvailable()),
  );
  const whole = () => readInputFile(state, 'evidence', (ix) => evidenceHandler(state, ix));
  // Warnings from before evidence.csv, to go back to when it is read again.
  const warnings = { kept: state.warnings.length, count: state.warningCount };
  const at = state.evidence.connect && halfThreadAvailable() ? await splitOffset(state, split) : -1;
  if (at < 0) await whole();
  else if (!(await readEvidenceInTwo(state, at))) {
    await resetEvidence(state, warnings);
    await whole();
  }
  if (duplicateFingerprints(state)) {
    await resetEvidence(state, warnings);
    state.evidenceExact = true;
    await readInputFile(state, 'evidence', (ix) => evidenceHandler(state, ix));
  }
  await state.evidence.seal();
}

const HALF_THREAD_FILE = join(__dirname, 'evidence-half.js');

function halfThreadAvailable(): boolean {
  return workerFileAvailable(HALF_THREAD_FILE);
}

/** Where a second thread starts reading evidence.csv: just past a line break; -1 for one thread. */
async function splitOffset(state: StageState, split: boolean | number | undefined): Promise<number> {
  if (split === false) return -1;
  const path = join(state.inputDir, INPUT_FILES.evidence.file);
  const size = await stat(path).then(
    (st) => (st.isFile() ? st.size : -1),
    () => -1,
  );
  if (size < 0 || (split === undefined && size < SPLIT_FROM_BYTES)) return -1;
  const guess = typeof split === 'number' ? split : Math.floor(size * SPLIT_SHARE);
  if (guess <= 0 || guess >= size) return -1;
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(SPLIT_SEARCH_BYTES, size - guess));
    const { bytesRead } = await fh.read(buf, 0, buf.length, guess);
    const nl = buf.subarray(0, bytesRead).indexOf(10);
    const at = nl < 0 ? -1 : guess + nl + 1;
    return at < size ? at : -1;
  } finally {
    await fh.close();
  }
}

/**
 * Reads evidence.csv with two threads: this one up to byte `at`, a worker from there to the end,
 * and merges what the worker found. `at` follows a line break, which need not end a record (a quoted
 * field may hold one): reading up to it tells, and then, as when the worker met a case whose merge
 * would differ from one thread's reading, this returns false with the items of both in the buckets,
 * for the caller to reset and read the file on one thread.
 */
async function readEvidenceInTwo(state: StageState, at: number): Promise<boolean> {
  const sink = state.evidence as EvidenceSink;
  const port = await (sink.connect as () => Promise<MessagePort>).call(sink);
  const snapshot = state.edgeIds.snapshot();
  const data: EvidenceHalfData = {
    inputDir: state.inputDir,
    stagingDir: state.stagingDir,
    maxRejected: state.maxRejected,
    start: at,
    nEdges: state.edges.n,
    edgeIds: snapshot,
    rejectedEdges: state.rejectedEdges,
    port,
  };
  let half: Worker;
  try {
    half = new Worker(HALF_THREAD_FILE, {
      workerData: data,
      transferList: [port, snapshot.table.buffer, snapshot.bytes.buffer, snapshot.start.buffer],
      resourceLimits: { maxYoungGenerationSizeMb: STAGE_YOUNG_GENERATION_MB },
    });
  } catch (e) {
    port.close();
    throw e;
  }
  const answer = new Promise<EvidenceHalfReply>((resolve, reject) => {
    half.on('message', (m: EvidenceHalfReply) => {
      if (m.type !== 'read') return resolve(m);
      state.readBeside.rows = m.rows;
      state.readBeside.bytes = m.bytes;
    });
    half.on('error', reject);
    half.on('exit', (code) => reject(new Error(`evidence reader stopped with exit code ${code}`)));
  });
  // Settled whatever happens here: a failure of the worker also shows when it is awaited.
  answer.catch(() => undefined);
  let told = false;
  try {
    let end: CsvRangeEnd | null;
    try {
      end = await readInputFile(state, 'evidence', (ix) => evidenceHandler(state, ix), {
        end: at,
        onHeader: (names) => {
          half.postMessage({ type: 'header', names } satisfies EvidenceHalfRequest);
          told = true;
        },
      });
    } catch (e) {
      // The limits of an open record are checked where the text read ends, and this part ends at `at`
      // where one thread's piece would not: one thread decides, once the worker's lines are all in.
      if (!(e instanceof CsvFatalError)) throw e;
      if (told) await answer;
      return false;
    }
    if (end === null) throw new Error('evidence.csv went away while it was read');
    // No header before `at` (blank lines first): the worker never started, and one thread reads all.
    if (!told) return false;
    const reply = await answer;
    if (!end.atRecordStart || reply.type !== 'done') return false;
    const r = reply.result;
    if (r.idReused || rejectedIdSeen(state, r)) return false;
    mergeHalf(state, r, end.nextLine - 1);
    const file = INPUT_FILES.evidence.file;
    const rows = state.inputRows[file] as number;
    state.progress({ phase: 'read', file, rows, totalRowsHint: rows });
    return true;
  } finally {
    await half.terminate();
    state.readBeside.rows = 0;
    state.readBeside.bytes = 0;
  }
}

/**
 * Whether the second part may hold the id of a row the first part rejected, accepted (by fingerprint)
 * or rejected for another reason: one thread refuses such a row as the reuse of a rejected id.
 */
function rejectedIdSeen(state: StageState, r: EvidenceHalfResult): boolean {
  if (state.rejectedEvidence.size === 0) return false;
  for (const id of r.rejectedIds) if (state.rejectedEvidence.has(id)) return true;
  const rejected = new Set<number>();
  for (const id of state.rejectedEvidence.keys()) rejected.add(fingerprint(id));
  const accepted = r.fingerprints;
  for (let i = 0; i < accepted.length; i++) if (rejected.has(accepted[i] as number)) return true;
  return false;
}

/** Adds the second part's findings to the first's; its lines follow line `shift` of the file. */
function mergeHalf(state: StageState, r: EvidenceHalfResult, shift: number): void {
  const file = INPUT_FILES.evidence.file;
  state.inputRows[file] = (state.inputRows[file] ?? 0) + r.rows;
  for (const w of r.warnings) state.warn(w.file, w.line + shift, w.reason);
  state.warningCount += r.warningCount - r.warnings.length;
  // In line order after the first part's, so that a limit of rejected rows stops where one thread would.
  for (const x of r.rejected) state.reject(x.file, x.line + shift, x.reason);
  state.items.evidence += r.items;
  const fp = r.fingerprints;
  state.roomForFingerprints(fp.length);
  state.evidenceFp.set(fp, state.evidenceFpCount);
  state.evidenceFpCount += fp.length;
  // The second part's type bits, numbered by its own first sight, renumbered in this thread's.
  const bits = r.types.slice(0, 30).map((t) => state.typeBits.add(t));
  const masks = new Map<number, number>();
  const E = state.edges;
  for (let e = 0; e < E.n; e++) {
    const c = r.evCount[e] as number;
    if (c === 0) continue;
    E.evCount[e] = (E.evCount[e] as number) + c;
    const max = r.evMax[e] as number;
    if (!Number.isNaN(max) && !(max <= (E.evMax[e] as number))) E.evMax[e] = max;
    const fin = r.evMaxFin[e] as number;
    if (!Number.isNaN(fin) && !(fin <= (E.evMaxFin[e] as number))) E.evMaxFin[e] = fin;
    const m = r.evTypes[e] as number;
    if (m === 0) continue;
    let mapped = masks.get(m);
    if (mapped === undefined) {
      mapped = 0;
      for (let b = 0; b < bits.length; b++) {
        if ((m & (1 << b)) === 0) continue;
        const to = bits[b] as number;
        // Past this thread's 30 bits: kept per edge, as addType does (-1 marks such a mask).
        if (to >= 30) mapped = -1;
        if (mapped >= 0) mapped |= 1 << to;
        if (mapped < 0) break;
      }
      masks.set(m, mapped);
    }
    if (mapped >= 0) E.evTypes[e] = (E.evTypes[e] as number) | mapped;
    else
      for (let b = 0; b < bits.length; b++) if ((m & (1 << b)) !== 0) addType(state, e, r.types[b] as string);
  }
  for (const [e, types] of r.extraTypes) for (const t of types) addType(state, e, t);
}

export function evidenceHandler(state: StageState, ix: (c: string) => number): RowHandler {
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
      if (state.rejectedEvidence.size > 0 && state.rejectedEvidence.has(id)) state.evidenceIdReused = true;
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
        state.roomForFingerprints(1);
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

/** Forgets everything the evidence file contributed, for a second pass; warnings go back to `warnings`. */
async function resetEvidence(state: StageState, warnings: { kept: number; count: number }): Promise<void> {
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
  state.warnings.length = warnings.kept;
  state.warningCount = warnings.count;
  state.clearFingerprints();
  state.rejectedEvidence.clear();
  state.evidenceIdReused = false;
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

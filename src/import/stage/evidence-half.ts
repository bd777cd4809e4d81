/**
 * Worker-thread entry point of the importer: reads the second part of evidence.csv while the staging
 * thread reads the first (stage/evidence.ts, readEvidenceInTwo). It checks each row as the staging
 * thread would, writes the accepted items into the evidence buckets through a port to the evidence
 * worker, and answers with what the staging thread merges: the per-edge summaries, the id
 * fingerprints, the rejected rows with lines counted from its start, and the evidence types.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort, Transferable } from 'node:worker_threads';
import { CsvFatalError, MAX_RECORD_CHARS } from '../csv';
import { PortSink } from '../evidence-buckets';
import { ImportAbortedError } from '../stage-result';
import type { RejectedRow } from '../stage-result';
import { AsciiIndex } from '../string-index';
import type { AsciiIndexSnapshot } from '../string-index';
import { evidenceHandler } from './evidence';
import { readInputRows } from './read-file';
import { StageState } from './state';

/** What the thread is started with. */
export interface EvidenceHalfData {
  inputDir: string;
  stagingDir: string;
  maxRejected: number;
  /** Byte offset of the first line it reads: a record boundary, if the guess holds. */
  start: number;
  nEdges: number;
  edgeIds: AsciiIndexSnapshot;
  rejectedEdges: Map<string, number>;
  /** To the evidence worker (WorkerSink.connect). */
  port: MessagePort;
}

/** The staging thread's one message: the header's columns, once it has checked them. */
export interface EvidenceHalfRequest {
  type: 'header';
  names: string[];
}

/** What it read, for the staging thread to merge. Lines count from 1 at `start`. */
export interface EvidenceHalfResult {
  rows: number;
  items: number;
  rejected: RejectedRow[];
  warnings: RejectedRow[];
  warningCount: number;
  /** Fingerprints of the accepted ids. */
  fingerprints: Float64Array<ArrayBuffer>;
  evCount: Int32Array<ArrayBuffer>;
  evTypes: Int32Array<ArrayBuffer>;
  evMax: Float64Array<ArrayBuffer>;
  evMaxFin: Float64Array<ArrayBuffer>;
  /** Evidence types in the order of their bits in evTypes. */
  types: string[];
  /** Types past the first 30, per edge. */
  extraTypes: [number, string[]][];
  /** Ids of its rejected rows, where they were valid ids. */
  rejectedIds: string[];
  /** A row reused the id of a rejected row: its reason names that row's line, counted from `start`. */
  idReused: boolean;
}

export type EvidenceHalfReply =
  | { type: 'read'; rows: number; bytes: number }
  | { type: 'done'; result: EvidenceHalfResult }
  /** What it read cannot be merged as it is; the staging thread reads the whole file instead. */
  | { type: 'again'; reason: string };

const port = parentPort;
if (port !== null) {
  const data = workerData as EvidenceHalfData;
  const reply = (m: EvidenceHalfReply, transfer: Transferable[] = []): void => port.postMessage(m, transfer);
  const state = new StageState(data.inputDir, data.stagingDir, data.maxRejected, undefined);
  state.edgeIds = AsciiIndex.from(data.edgeIds);
  for (const [id, line] of data.rejectedEdges) state.rejectedEdges.set(id, line);
  const n = data.nEdges;
  const E = state.edges;
  E.n = n;
  E.evCount = new Int32Array(n);
  E.evTypes = new Int32Array(n);
  E.evMax = new Float64Array(n).fill(NaN);
  E.evMaxFin = new Float64Array(n).fill(NaN);
  const sink = new PortSink(data.port);
  state.evidence = sink;
  state.onRead = (rows, bytes) => reply({ type: 'read', rows, bytes });
  const read = async (names: string[]): Promise<void> => {
    let rows = 0;
    try {
      const read = await readInputRows(state, 'evidence', names, data.start, (ix) =>
        evidenceHandler(state, ix),
      );
      rows = read.rows;
      if (read.end.sawLong) {
        await sink.seal();
        reply({ type: 'again', reason: `a line or record longer than ${MAX_RECORD_CHARS} characters` });
        return;
      }
    } catch (e) {
      // Past its limit of rejected rows, or CSV that cannot be read on (which a start inside a quoted
      // field also gives): the staging thread reads the whole file and says what it finds there.
      if (!(e instanceof ImportAbortedError || e instanceof CsvFatalError)) throw e;
      await sink.seal();
      reply({ type: 'again', reason: e.message });
      return;
    }
    // Every item is in its bucket before the staging thread hears of the end: it may reset them.
    await sink.seal();
    const fingerprints = state.evidenceFp.slice(0, state.evidenceFpCount);
    const types: string[] = [];
    for (let b = 0; b < state.typeBits.size; b++) types.push(state.typeBits.key(b));
    const result: EvidenceHalfResult = {
      rows,
      items: state.items.evidence,
      rejected: state.rejected,
      warnings: state.warnings,
      warningCount: state.warningCount,
      fingerprints,
      evCount: E.evCount,
      evTypes: E.evTypes,
      evMax: E.evMax,
      evMaxFin: E.evMaxFin,
      types,
      extraTypes: [...state.extraTypes].map(([e, set]) => [e, [...set]]),
      rejectedIds: [...state.rejectedEvidence.keys()],
      idReused: state.evidenceIdReused,
    };
    reply({ type: 'done', result }, [
      fingerprints.buffer,
      E.evCount.buffer,
      E.evTypes.buffer,
      E.evMax.buffer,
      E.evMaxFin.buffer,
    ]);
  };
  port.once('message', (m: EvidenceHalfRequest) => {
    read(m.names).then(
      () => port.close(),
      (e: unknown) => {
        // Rethrown outside the promise so that the staging thread's 'error' handler receives it.
        setImmediate(() => {
          throw e;
        });
      },
    );
  });
}

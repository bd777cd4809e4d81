/**
 * Worker-thread entry point of the importer: reads the second part of evidence.csv while the staging
 * thread reads the first (stage/evidence.ts, readEvidenceInTwo). It checks each row as the staging
 * thread would, writes the accepted items into the evidence buckets through a port to the evidence
 * worker, and answers with what the staging thread merges: the per-edge summaries, the id
 * fingerprints, the rejected rows with lines counted from its start, and the evidence types.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Transferable } from 'node:worker_threads';
import { CsvFatalError, MAX_RECORD_CHARS } from '../csv';
import { PortSink } from '../evidence-buckets';
import { ImportAbortedError } from '../stage-result';
import { AsciiIndex } from '../string-index';
import { evidenceHandler } from './evidence';
import type {
  EvidenceHalfData,
  EvidenceHalfReply,
  EvidenceHalfRequest,
  EvidenceHalfResult,
} from './evidence-half-messages';
import { readInputRows } from './read-file';
import { StageState } from './state';

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

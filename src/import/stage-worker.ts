/**
 * Worker-thread entry point of the staging (see stage-thread.ts): runs stageImport and hands its
 * callbacks' calls to the main thread, which owns what they reach (the progress bar, the search
 * index's build thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { stageImport } from './stage';
import type { CompanySink } from './stage-result';
import { toThreadError } from './stage-thread';
import type { StageThreadData, StageThreadReply, StageThreadRequest } from './stage-thread';

const port = parentPort;
if (port !== null) {
  const data = workerData as StageThreadData;
  const reply = (m: StageThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  // A copy of its own, moved: a buffer handed over may share its memory with others (a pooled one).
  const send = (type: 'names' | 'lines', text: Buffer) => {
    const own = new Uint8Array(text);
    reply({ type, text: own }, [own.buffer]);
  };
  // Answers to the pieces of Company rows, in the order they were sent.
  const waiting: (() => void)[] = [];
  port.on('message', (m: StageThreadRequest) => {
    if (m.type === 'taken') waiting.shift()?.();
  });
  const companies: CompanySink | undefined = data.companies
    ? {
        names: (text) => send('names', text),
        lines: (text) => {
          send('lines', text);
          return new Promise<void>((resolve) => waiting.push(resolve));
        },
        readAll: () => reply({ type: 'read-all' }),
        allLines: () => reply({ type: 'all-lines' }),
        counts: (counts) => reply({ type: 'counts', counts }),
      }
    : undefined;
  stageImport(data.inputDir, data.stagingDir, {
    maxRejected: data.maxRejected,
    evidenceWorker: data.evidenceWorker,
    evidenceSplit: data.evidenceSplit,
    onProgress: (progress) => reply({ type: 'progress', progress }),
    companies,
  }).then(
    (result) => {
      reply({ type: 'staged', result });
      port.close();
    },
    (err: unknown) => {
      reply({ type: 'failed', error: toThreadError(err) });
      port.close();
    },
  );
}

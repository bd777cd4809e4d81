/**
 * Worker-thread entry point of the dataset generator: runs one task from
 * generate.ts and reports progress and row counts to the parent thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runGenerateTask } from './generate';
import type { GenerateTask, WorkerMessage } from './generate';

const port = parentPort;
if (port !== null) {
  const post = (m: WorkerMessage): void => port.postMessage(m);
  runGenerateTask(workerData as GenerateTask, (file, rows) => post({ type: 'progress', file, rows })).then(
    (counts) => post({ type: 'done', counts }),
    (e: unknown) => {
      // Rethrown outside the promise so that the parent's 'error' handler receives it.
      setImmediate(() => {
        throw e;
      });
    },
  );
}

/**
 * A worker thread that finds the typo words of a vocabulary for a word index being built on another
 * thread (see typoTable in word-index.ts), and ends once it has answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { typoTableOf, vocabularyTrigrams } from './word-index';
import type { TypoPriority, TypoThreadData } from './word-index';
import { setThreadPriority } from './thread-priority';

const { vocab, priority } = workerData as TypoThreadData;
let raise: TypoPriority | undefined = priority;

/** Between words: takes the priority the build asks for, once it asks (see TypoPriority). */
const between = {
  next: (): Promise<void> => {
    if (raise && Atomics.load(raise.raiseWhen, 0) === 1) {
      const to = raise.to;
      raise = undefined;
      // The build raised its own the same way; should this fail, the table is found all the same.
      setThreadPriority(to);
    }
    return Promise.resolve();
  },
};

void typoTableOf(vocab, vocabularyTrigrams(vocab), between).then((table) =>
  parentPort!.postMessage(table, [table.typoStart.buffer, table.typoIds.buffer]),
);

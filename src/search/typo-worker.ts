/**
 * A worker thread that finds the typo words of a vocabulary for a word index being built on the main
 * thread (see typoTable in word-index.ts), and ends once it has answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { typoTableOf, vocabularyTrigrams } from './word-index';

const { vocab } = workerData as { vocab: string[] };
void typoTableOf(vocab, vocabularyTrigrams(vocab)).then((table) =>
  parentPort!.postMessage(table, [table.typoStart.buffer, table.typoIds.buffer]),
);

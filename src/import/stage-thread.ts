/**
 * Stages an import (stage.ts) on a thread of its own, whose young generation is larger than the
 * main thread's default. Staging allocates a string per field and an object per row of files of
 * millions of rows, and keeps many of them for a few megabytes of input (a chunk, a batch of
 * evidence, a piece of Company rows): with V8's default semi-spaces of 16 MiB they outlived a
 * young collection often enough to be copied once or twice and then promoted, and at 1M companies
 * the staging took 69–75 s and 98–105 s of CPU where semi-spaces of 64 MiB gave 62–67 s and
 * 85–94 s (bench/README.md). A main thread's young generation is fixed when the process starts;
 * a worker's is set when it starts. From sources (no compiled worker) it stages on this thread.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import { stageImport } from './stage';
import { ImportAbortedError } from './stage-result';
import { STAGE_YOUNG_GENERATION_MB } from './stage/state';
import type {
  CompanyCountColumns,
  ImportProgress,
  RejectedRow,
  StageOptions,
  StageResult,
} from './stage-result';

/** What a staging thread is started with: stageImport's arguments but its callbacks. */
export interface StageThreadData {
  inputDir: string;
  stagingDir: string;
  maxRejected?: number;
  evidenceWorker?: boolean;
  evidenceSplit?: boolean | number;
  /** Whether the Company rows are handed over (StageOptions.companies). */
  companies: boolean;
}

/** The main thread's answer to a piece of Company rows: the sink is ready for more. */
export interface StageThreadRequest {
  type: 'taken';
}

/** What a staging thread tells the main thread: its callbacks' calls, then its end. */
export type StageThreadReply =
  | { type: 'progress'; progress: ImportProgress }
  | { type: 'names'; text: Uint8Array }
  | { type: 'lines'; text: Uint8Array }
  | { type: 'read-all' }
  | { type: 'all-lines' }
  | { type: 'counts'; counts: CompanyCountColumns }
  | { type: 'staged'; result: StageResult }
  | { type: 'failed'; error: StageThreadError };

/** A staging failure as it crosses threads: an ImportAbortedError keeps its rejected rows. */
export interface StageThreadError {
  message: string;
  stack?: string;
  rejected?: RejectedRow[];
  warnings?: RejectedRow[];
  warningCount?: number;
}

const WORKER_FILE = join(__dirname, 'stage-worker.js');

/** Whether the compiled worker script is there (it is not when running from TypeScript sources). */
export function stageThreadAvailable(): boolean {
  return workerFileAvailable(WORKER_FILE);
}

/** As stageImport, on a staging thread of its own where there is one. */
export async function stageOnThread(
  inputDir: string,
  stagingDir: string,
  opts: StageOptions = {},
): Promise<StageResult> {
  if (!stageThreadAvailable()) return stageImport(inputDir, stagingDir, opts);
  const { onProgress, companies } = opts;
  const worker = new Worker(WORKER_FILE, {
    workerData: {
      inputDir,
      stagingDir,
      maxRejected: opts.maxRejected,
      evidenceWorker: opts.evidenceWorker,
      evidenceSplit: opts.evidenceSplit,
      companies: companies !== undefined,
    } satisfies StageThreadData,
    resourceLimits: { maxYoungGenerationSizeMb: STAGE_YOUNG_GENERATION_MB },
  });
  try {
    return await new Promise<StageResult>((resolve, reject) => {
      const fail = (err: unknown) => reject(err instanceof Error ? err : new Error(String(err)));
      worker.on('message', (m: StageThreadReply) => {
        try {
          switch (m.type) {
            case 'progress':
              onProgress?.(m.progress);
              break;
            case 'names':
              companies?.names?.(bufferOf(m.text));
              break;
            case 'lines':
              // The staging thread waits for this answer, as the staging waits for the sink's promise.
              void Promise.resolve(companies?.lines(bufferOf(m.text))).then(
                () => worker.postMessage({ type: 'taken' } satisfies StageThreadRequest),
                fail,
              );
              break;
            case 'read-all':
              companies?.readAll?.();
              break;
            case 'all-lines':
              companies?.allLines?.();
              break;
            case 'counts':
              companies?.counts(m.counts);
              break;
            case 'staged':
              resolve(m.result);
              break;
            case 'failed':
              reject(fromThread(m.error));
              break;
          }
        } catch (err) {
          fail(err);
        }
      });
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`staging thread exited with ${code} before it ended`)));
    });
  } finally {
    // The staging removed its files when it failed; a failure here (a callback's) stops it too.
    await worker.terminate();
  }
}

/** The bytes a thread moved here, as a Buffer over the same memory. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A failure as the staging thread sends it. */
export function toThreadError(err: unknown): StageThreadError {
  if (!(err instanceof Error)) return { message: String(err) };
  return {
    message: err.message,
    stack: err.stack,
    rejected: err instanceof ImportAbortedError ? err.rejected : undefined,
    warnings: err instanceof ImportAbortedError ? err.warnings : undefined,
    warningCount: err instanceof ImportAbortedError ? err.warningCount : undefined,
  };
}

/** The error a staging thread sent, as stageImport would have thrown it. */
function fromThread(e: StageThreadError): Error {
  const err = e.rejected
    ? new ImportAbortedError(e.message, e.rejected, e.warnings, e.warningCount)
    : new Error(e.message);
  if (e.stack) err.stack = e.stack;
  return err;
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import type { SearchRow } from '../domain/search-row';
import type { GraphStore } from '../store/graph-store';
import type { SharedSnapshot } from '../store/snapshot';
import { CompanySearchIndex } from './company-search';

/** What the main thread sends a build thread: the store's rows batch by batch, then their end. */
export type BuildThreadRequest = { type: 'rows'; rows: SearchRow[] } | { type: 'end' };

/** A build thread's answer: a batch taken, the index built (in shared memory), or a failure. */
export type BuildThreadReply =
  | { type: 'taken'; rows: number }
  | { type: 'built'; shared: SharedSnapshot }
  | { type: 'failed'; error: string };

/** A built index, with its arrays in shared memory when it was built on a thread of its own. */
export interface BuiltIndex {
  index: CompanySearchIndex;
  shared: SharedSnapshot | null;
}

const WORKER_FILE = join(__dirname, 'build-worker.js');

/** Batches sent to the build thread and not taken yet, at most: the store's read waits beyond. */
const BATCHES_AHEAD = 4;

/** Whether the compiled worker script is there (it is not when running from TypeScript sources). */
export function buildThreadAvailable(): boolean {
  return __filename.endsWith('.js') && existsSync(WORKER_FILE);
}

/**
 * Builds the search index from the store. The store is read on this thread (its connections live
 * here) and every batch is handed to a thread of its own that indexes it as it comes: most of a minute of
 * work at 1M companies that otherwise ran on the thread answering requests, while the second core
 * was mostly idle. The index comes back in shared memory, ready for the search threads, and the
 * thread's heap, with all the garbage of the build, goes with it. From sources (no compiled worker)
 * the index is built on this thread.
 */
export async function buildSearchIndex(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log?: Logger,
  opts: { signal?: AbortSignal; onRows?: (count: number) => void } = {},
): Promise<BuiltIndex> {
  const here = async () => ({ index: await CompanySearchIndex.build(store, log, opts), shared: null });
  if (!buildThreadAvailable()) return here();
  let counted = 0;
  try {
    return await onThread(store, log, {
      signal: opts.signal,
      onRows: (n) => {
        counted += n;
        opts.onRows?.(n);
      },
    });
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    // The thread could not start or did not finish (not the data's fault, or the build here fails
    // too): the store is read again, from the start, and the index built here.
    log?.warn({ err }, 'search index build thread failed; building on the main thread instead');
    opts.onRows?.(-counted);
    return here();
  }
}

async function onThread(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log: Logger | undefined,
  opts: { signal?: AbortSignal; onRows?: (count: number) => void },
): Promise<BuiltIndex> {
  const { signal, onRows } = opts;
  signal?.throwIfAborted();
  const started = Date.now();
  const worker = new Worker(WORKER_FILE);
  let ahead = 0;
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let over = false;
  const stop = () => void worker.terminate();
  signal?.addEventListener('abort', stop, { once: true });
  const built = new Promise<SharedSnapshot>((resolve, reject) => {
    const fail = (err: Error) => {
      failure = err;
      wake?.();
      reject(err);
    };
    worker.on('message', (m: BuildThreadReply) => {
      if (m.type === 'taken') {
        ahead--;
        // Not after the attempt ended: a build started here after a failure counts its own.
        if (!over) onRows?.(m.rows);
        wake?.();
      } else if (m.type === 'built') resolve(m.shared);
      else fail(new Error(`search index build thread failed: ${m.error}`));
    });
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`search index build thread exited with ${code}`)));
  });
  // Seen by the awaits below; a rejection before them is not an unhandled one.
  built.catch(() => undefined);
  try {
    let companies = 0;
    await store.scanSearchRows(async (rows) => {
      signal?.throwIfAborted();
      if (failure) throw failure;
      worker.postMessage({ type: 'rows', rows } satisfies BuildThreadRequest);
      companies += rows.length;
      ahead++;
      while (ahead >= BATCHES_AHEAD && !failure && !signal?.aborted) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    });
    signal?.throwIfAborted();
    worker.postMessage({ type: 'end' } satisfies BuildThreadRequest);
    log?.info({ companies }, 'search index: every company read; indexing them');
    const shared = await built.catch((err: unknown) => {
      throw signal?.aborted ? signal.reason : err;
    });
    const index = CompanySearchIndex.fromShared(shared);
    if (!index) throw new Error('search index build thread gave an index this thread cannot read');
    log?.info({ companies: index.size, ms: Date.now() - started, thread: true }, 'search index built');
    return { index, shared };
  } finally {
    over = true;
    signal?.removeEventListener('abort', stop);
    void worker.terminate();
  }
}

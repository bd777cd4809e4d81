import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import type { Logger } from '../logger';
import type { SearchRow } from '../domain/search-row';
import type { GraphStore } from '../store/graph-store';
import type { SharedSnapshot } from '../store/snapshot';
import {
  decodeStagedCompanyLines,
  decodeStagedNames,
  stagedSearchRowDecoder,
} from '../store/staged-search-rows';
import { CompanySearchIndex, SearchIndexBuilder } from './company-search';
import type { CompanyCounts } from './company-search';

/** Where an index is saved: its file, and the key it is saved under (CompanySearchIndex.save). */
export interface IndexFile {
  file: string;
  key: string;
}

/**
 * What the main thread sends a build thread: the store's rows batch by batch, or an import's staged
 * Company lines without their counts (see SearchIndexBuilder.addUncounted), their end, and then the
 * counts; then the end of all, with where to save the index when it is to be saved from there. An
 * import's thread keeps the index it finished (`keep`) until it is told where to save it.
 */
export type BuildThreadRequest =
  | { type: 'rows'; rows: SearchRow[] }
  | { type: 'names'; text: Uint8Array }
  | { type: 'lines'; text: Uint8Array }
  | { type: 'all-lines' }
  | { type: 'counts'; counts: CompanyCounts }
  | { type: 'end'; keep?: boolean; saveTo?: IndexFile & { sync: boolean } }
  | ({ type: 'save' } & IndexFile);

/**
 * A build thread's answer: a batch taken, the index built (in shared memory; `unsaved`, the error,
 * when it was to be saved and could not be) or saved, or a failure.
 */
export type BuildThreadReply =
  | { type: 'started'; lowered: boolean }
  | { type: 'taken'; rows: number }
  | { type: 'built'; shared: SharedSnapshot; unsaved?: string }
  | { type: 'saved'; companies: number }
  | { type: 'failed'; error: string };

/**
 * A built index, with its arrays in shared memory when it was built on a thread of its own;
 * `saved` when it is in the file it was to be saved to (buildSearchIndex's `saveTo`) already.
 */
export interface BuiltIndex {
  index: CompanySearchIndex;
  shared: SharedSnapshot | null;
  saved: boolean;
}

const WORKER_FILE = join(__dirname, 'build-worker.js');

/** Batches sent to the build thread and not taken yet, at most: the store's read waits beyond. */
const BATCHES_AHEAD = 4;

/** Pieces of staged Company lines sent to a fed build thread and not taken yet, at most, before the feed waits. */
const LINES_AHEAD = 3;

/**
 * The young generation of a build fed by an import, in MiB (three semi-spaces of 128): nearly all
 * the build allocates dies within a piece of lines, and V8's default (semi-spaces of 16 MiB) collected
 * it so often that at 1M companies the build took 56 s of CPU against 47 s with this (its garbage
 * collection runs on V8's helper threads at normal priority, beside the staging, see
 * build-worker.ts). An import's thread, not a server's: it costs as much memory more while it runs.
 */
const FED_YOUNG_GENERATION_MB = 384;

/** What a build thread is started with. */
export interface BuildThreadData {
  /** For a build fed by an import: 1 once the import has read every file and waits for the build. */
  readAll: Int32Array;
}

/** Whether the compiled worker script is there (it is not when running from TypeScript sources). */
export function buildThreadAvailable(): boolean {
  return workerFileAvailable(WORKER_FILE);
}

/**
 * Builds the search index from the store. The store is read on this thread (its connections live
 * here) and every batch is handed to a thread of its own that indexes it as it comes: most of a minute of
 * work at 1M companies that otherwise ran on the thread answering requests, while the second core
 * was mostly idle. The index comes back in shared memory, ready for the search threads, and the
 * thread's heap, with all the garbage of the build, goes with it. With `saveTo`, the thread saves
 * the index there, not synced to disk yet (the caller syncs it, syncFile, before it relies on it
 * after a crash: at 1M companies the sync took seconds that a first start waited for before it was
 * ready), and ends, and this thread reads the file back into shared memory: copied straight
 * from the thread's arrays, the index was in memory twice until the thread ended, some 0.7 GB more
 * at the peak of a first start at 1M companies (`saved` says whether it was saved; should the save
 * fail, the index comes over in shared memory all the same, and the failure is logged). From sources
 * (no compiled worker) the index is built on this thread, and not saved.
 */
export async function buildSearchIndex(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log?: Logger,
  opts: BuildOptions & { saveTo?: IndexFile } = {},
): Promise<BuiltIndex> {
  const { saveTo } = opts;
  const here = async () => ({
    index: await CompanySearchIndex.build(store, log, opts),
    shared: null,
    saved: false,
  });
  if (!buildThreadAvailable()) return here();
  const ended = await attemptOnThread(store, log, opts, saveTo && { ...saveTo, sync: false });
  if (!ended) return here();
  if ('companies' in ended) {
    // The thread has ended, and its heap with it, before the file is read.
    const loaded = await CompanySearchIndex.loadShared(saveTo!.file, saveTo!.key).catch(() => null);
    if (loaded?.shared) return { index: loaded.index, shared: loaded.shared, saved: true };
    log?.warn({ file: saveTo!.file }, 'search index saved by its build thread unreadable; building it here');
    return here();
  }
  if (ended.unsaved !== undefined)
    log?.warn({ error: ended.unsaved, file: saveTo?.file }, 'could not save the search index');
  const index = CompanySearchIndex.fromShared(ended.shared);
  if (!index) throw new Error('search index build thread gave an index this thread cannot read');
  return { index, shared: ended.shared, saved: false };
}

/**
 * Builds the search index from the store as buildSearchIndex does and saves it to `to`, keeping
 * nothing of it on this thread (an import's, for the servers of its data): built on a thread of its
 * own, that thread saves it. Answers how many companies it holds; rejects when the save fails.
 */
export async function saveSearchIndex(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log: Logger | undefined,
  to: IndexFile,
  opts: BuildOptions = {},
): Promise<{ companies: number }> {
  const ended = buildThreadAvailable()
    ? await attemptOnThread(store, log, opts, { ...to, sync: true })
    : null;
  if (ended && 'companies' in ended) return ended;
  if (ended) throw new Error(`could not save the search index to ${to.file}: ${ended.unsaved}`);
  const index = await CompanySearchIndex.build(store, log, opts);
  await index.save(to.file, to.key);
  return { companies: index.size };
}

interface BuildOptions {
  signal?: AbortSignal;
  /** Called with the companies of each batch read; with minus those read so far when the read starts again. */
  onRows?: (count: number) => void;
}

/**
 * The build on a thread of its own; null, after a warning, when the thread could not start or did
 * not finish (not the data's fault, or the build here fails too): the caller then reads the store
 * again, from the start, and builds the index on its own thread. Rejects with the abort's reason.
 */
async function attemptOnThread(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log: Logger | undefined,
  opts: BuildOptions,
  saveTo: (IndexFile & { sync: boolean }) | undefined,
): Promise<ThreadEnd | null> {
  let counted = 0;
  try {
    return await onThread(store, log, {
      signal: opts.signal,
      onRows: (n) => {
        counted += n;
        opts.onRows?.(n);
      },
      saveTo,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    log?.warn({ err }, 'search index build thread failed; building on the main thread instead');
    opts.onRows?.(-counted);
    return null;
  }
}

/** How a build thread ended: its index in shared memory, or saved where it was told. */
type ThreadEnd = { shared: SharedSnapshot; unsaved?: string } | { companies: number };

/** The build on a thread of its own; the thread has ended by the time this resolves. */
async function onThread(
  store: Pick<GraphStore, 'scanSearchRows'>,
  log: Logger | undefined,
  opts: BuildOptions & { saveTo?: IndexFile & { sync: boolean } },
): Promise<ThreadEnd> {
  const { signal, onRows, saveTo } = opts;
  signal?.throwIfAborted();
  const started = Date.now();
  const worker = new Worker(WORKER_FILE);
  let ahead = 0;
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let over = false;
  const stop = () => void worker.terminate();
  signal?.addEventListener('abort', stop, { once: true });
  const built = new Promise<ThreadEnd>((resolve, reject) => {
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
      } else if (m.type === 'built') resolve({ shared: m.shared, unsaved: m.unsaved });
      else if (m.type === 'saved' && saveTo) resolve({ companies: m.companies });
      else if (m.type === 'failed') fail(new Error(`search index build thread failed: ${m.error}`));
      else fail(new Error(`search index build thread answered ${m.type}`));
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
    worker.postMessage({ type: 'end', saveTo } satisfies BuildThreadRequest);
    log?.info({ companies }, 'search index: every company read; indexing them');
    const ended = await built.catch((err: unknown) => {
      throw signal?.aborted ? signal.reason : err;
    });
    log?.info(
      { companies, ms: Date.now() - started, thread: true, saved: 'companies' in ended },
      'search index built',
    );
    return ended;
  } finally {
    over = true;
    signal?.removeEventListener('abort', stop);
    await worker.terminate();
  }
}

/**
 * A search index built while an import stages its files (see StageOptions.companies): its staged
 * Company lines as they come, without their counts, then the counts, which let the build finish.
 */
export interface FedSearchIndex {
  /** The companies' names ahead of their lines (see CompanySink.names). */
  names(text: Buffer): void;
  /**
   * Whole staged Company lines (no header), their count columns empty. Resolves, when it returns a
   * promise, once the thread has few lines left waiting.
   */
  lines(text: Buffer): void | Promise<void>;
  /** The staging read every file and waits now: the thread takes its full share of the machine. */
  readAll(): void;
  /** Every company's lines are given: what needs no counts is made while they are derived. */
  allLines(): void;
  /** Every company's counts, in the order of the lines: the build then finishes on its own. */
  counts(counts: CompanyCounts): void;
  /**
   * Saves the index, once built, to `file` under `key` (CompanySearchIndex.save), from where it was
   * built: an index made on a thread of its own is written by that thread, not copied to this one
   * first. Answers how many companies it holds; rejects when the build or the save failed, the build
   * was stopped, or `signal` aborts first. The build is over then, whatever the outcome.
   */
  save(file: string, key: string, signal?: AbortSignal): Promise<{ companies: number }>;
  /** Stops the build (an import that failed); its thread ends. */
  stop(): void;
}

/**
 * Starts a search index fed by an import's staging. Most of the index's work needs no count and is
 * done on a thread of its own while the import reads its relationships and evidence (at 1M
 * companies on two cores, the staging alone keeps 1.1 to 1.6 of them busy), instead of during the
 * store's load, which keeps both busy. That pays only if the thread takes the time the staging
 * leaves and no more, at the lowest priority, and then gets its share back for the rest of the
 * build: at the same priority as the staging, it slowed the staging by as much as it saved the
 * load. Where the process may not raise a thread's priority again (Linux without the privilege or
 * an RLIMIT_NICE for it, or another system), this answers null, and the index is built during the
 * load as before. From sources (no compiled worker) it is built on this thread, for tests.
 */
export async function feedSearchIndex(log?: Logger): Promise<FedSearchIndex | null> {
  if (!buildThreadAvailable()) return fedHere(log);
  let fed: ReturnType<typeof fedOnThread>;
  try {
    fed = fedOnThread(log);
  } catch (err) {
    log?.warn({ err }, 'search index build thread could not start; the index is built during the load');
    return null;
  }
  if (await fed.lowered) return fed;
  fed.stop();
  log?.info('search index built during the load: its thread could not give way to the staging');
  return null;
}

function fedHere(log: Logger | undefined): FedSearchIndex {
  const builder = new SearchIndexBuilder();
  const decode = stagedSearchRowDecoder();
  let failure: Error | null = null;
  let stopped = false;
  let result: Promise<CompanySearchIndex> | null = null;
  const guard = (work: () => void) => {
    if (failure !== null || stopped) return;
    try {
      work();
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
  };
  return {
    names: (text) => guard(() => builder.addNames(decodeStagedNames(text.toString('utf8')))),
    lines: (text) =>
      guard(() => builder.addUncounted(decodeStagedCompanyLines(text.toString('utf8'), decode))),
    readAll: () => undefined,
    allLines: () => guard(() => builder.prepare()),
    counts: (counts) =>
      guard(() => {
        builder.setCounts(counts);
        result = CompanySearchIndex.finish(builder, log);
        result.catch(() => undefined);
      }),
    save: async (file, key, signal) => {
      signal?.throwIfAborted();
      if (stopped) throw new Error('search index build stopped');
      if (failure !== null) throw failure;
      if (!result) throw new Error('search index build not given the counts of its companies');
      // Over now, as on a thread of its own: a second save is refused.
      stopped = true;
      const index = await result;
      signal?.throwIfAborted();
      await index.save(file, key);
      return { companies: index.size };
    },
    stop: () => void (stopped = true),
  };
}

function fedOnThread(log: Logger | undefined): FedSearchIndex & { lowered: Promise<boolean> } {
  const started = Date.now();
  // Set to 1 once the staging waits for the build (see build-worker.ts).
  const readAll = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_FILE, {
    workerData: { readAll } satisfies BuildThreadData,
    resourceLimits: { maxYoungGenerationSizeMb: FED_YOUNG_GENERATION_MB },
  });
  let companies = 0;
  let ended = false;
  let saveAsked = false;
  let ahead = 0;
  let wake: (() => void) | null = null;
  let started_: (lowered: boolean) => void = () => undefined;
  const lowered = new Promise<boolean>((resolve) => (started_ = resolve));
  // The thread's answer to the save: the companies of the index it saved.
  const saved = new Promise<number>((resolve, reject) => {
    worker.on('message', (m: BuildThreadReply) => {
      if (m.type === 'started') started_(m.lowered);
      else if (m.type === 'taken') {
        companies += m.rows;
        ahead--;
        wake?.();
      } else if (m.type === 'saved') resolve(m.companies);
      else if (m.type === 'failed') reject(new Error(`search index build thread failed: ${m.error}`));
      else reject(new Error(`search index build thread answered ${m.type}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`search index build thread exited with ${code}`)));
  });
  // Nothing more is posted, a feed waiting for the thread goes on, and a start not yet answered is a refusal.
  const end = () => {
    ended = true;
    wake?.();
    started_(false);
  };
  saved.catch(end);
  const post = (m: BuildThreadRequest, transfer: ArrayBuffer[] = []) => {
    if (!ended) worker.postMessage(m, transfer);
  };
  // A copy of its own (a few megabytes, well under a millisecond), moved to the thread: the
  // caller's buffer may share its memory with others.
  const postText = (type: 'names' | 'lines', text: Buffer) => {
    const own = new Uint8Array(text);
    post({ type, text: own }, [own.buffer]);
  };
  const stop = () => {
    end();
    void worker.terminate();
  };
  return {
    lowered,
    names: (text) => postText('names', text),
    lines: async (text) => {
      postText('lines', text);
      ahead++;
      while (ahead >= LINES_AHEAD && !ended) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    },
    readAll: () => void Atomics.store(readAll, 0, 1),
    allLines: () => post({ type: 'all-lines' }),
    counts: (counts) => {
      post({ type: 'counts', counts });
      post({ type: 'end', keep: true });
      log?.info({ companies: counts.suppliers.length }, 'search index: counts given; finishing it');
    },
    save: async (file, key, signal) => {
      // The thread ends with the first save: a second would answer without saving anything.
      if (saveAsked) throw new Error('search index build stopped: it was saved once already');
      saveAsked = true;
      const onAbort = () => stop();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        signal?.throwIfAborted();
        post({ type: 'save', file, key });
        const size = await saved.catch((err: unknown) => {
          throw signal?.aborted ? signal.reason : err;
        });
        log?.info(
          { companies: size, ms: Date.now() - started, fed: companies },
          'search index built and saved',
        );
        return { companies: size };
      } finally {
        signal?.removeEventListener('abort', onAbort);
        stop();
      }
    },
    stop,
  };
}

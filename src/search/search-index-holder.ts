import fs from 'node:fs';
import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { AppError } from '../domain/errors';
import { CompanySearchIndex } from './company-search';
import type { SearchCriteria } from './company-search';
import type { SearchResult, SearchThreads, SuggestRequest, Suggestions } from './search-threads';
import type { SharedSnapshot } from '../store/snapshot';
import { buildSearchIndex } from './build-thread';
import { syncFile, temporaryFor } from '../store/file-io';

/** The file name suffix of the saved index beside the graph. */
export const SEARCH_INDEX_NAME = 'search-index';

/** Seconds a search refused while the first index is built asks the client to wait (Retry-After). */
const FIRST_BUILD_RETRY_S = 5;
/** How often a build logs how many companies it has read. */
const PROGRESS_LOG_MS = 10_000;

/**
 * Holds the live search index and rebuilds it when the store's data changes
 * (after an import or a seed). Searches keep using the previous index while a
 * rebuild runs in the background, on a thread of its own where one can run (see
 * build-thread.ts; a minute or more at 1M companies). Until the
 * first index is there, searches wait for it, or with `refuseUntilBuilt` are
 * refused at once (UNAVAILABLE, with how far the build got and when to retry),
 * so that a server can answer everything else while it builds. Concurrent callers
 * share one rebuild. A store that can name its data lets the index be saved
 * beside it and loaded at the next start instead of rebuilt (54 to 75 s measured
 * at 1M companies, seconds to load).
 */
export class SearchIndexHolder {
  private current: CompanySearchIndex | null = null;
  private builtFor = -1;
  private building: Promise<CompanySearchIndex> | null = null;
  private buildingFor = -1;
  /** Companies the build under way has read from the store so far. */
  private read = 0;
  private saving: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();

  constructor(
    private readonly store: GraphStore,
    private readonly log?: Logger,
    /** Threads that search beside the main thread, over the live index in shared memory; null: none. */
    private readonly threads: SearchThreads | null = null,
    private readonly options: { refuseUntilBuilt?: boolean } = {},
  ) {}

  /** Searches the live index (on a search thread when one holds it), waiting for a first build. */
  search(criteria: SearchCriteria): Promise<SearchResult> {
    return this.onThreadOr(
      (threads, generation) => threads.search(generation, criteria),
      (index) => index.search(criteria),
    );
  }

  /** Suggestions for a search box from the live index (on a search thread when one holds it). */
  suggest(request: SuggestRequest): Promise<Suggestions> {
    return this.onThreadOr(
      (threads, generation) => threads.suggest(generation, request),
      (index) => index.suggest(request.query, request.limit, request.includeSubsidiaries),
    );
  }

  /** The answer of a thread holding the live index, else of the index on this thread. */
  private async onThreadOr<R>(
    there: (threads: SearchThreads, generation: number) => Promise<R | null>,
    here: (index: CompanySearchIndex) => R,
  ): Promise<R> {
    const index = await this.get();
    const generation = this.builtFor;
    return (this.threads ? await there(this.threads, generation) : null) ?? here(index);
  }

  /**
   * Stops a build under way (it reads no further from the store once this resolves), lets a save
   * under way end (a snapshot is not left half written), and stops the search threads.
   */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.building?.catch(() => undefined);
    await this.saving;
    await this.threads?.close();
  }

  /** Whether close was called: a build it stopped failed for that reason alone. */
  get closed(): boolean {
    return this.stopping.signal.aborted;
  }

  async get(): Promise<CompanySearchIndex> {
    if (!this.current) {
      if (!this.options.refuseUntilBuilt) return this.rebuild();
      this.rebuild().catch((err: unknown) => {
        if (!this.closed) this.log?.error({ err }, 'search index build failed');
      });
      throw new AppError(
        'UNAVAILABLE',
        `The search index is being built (${this.read.toLocaleString('en-US')} companies read so far); ` +
          `searches are answered once it is ready (GET /readyz). Try again in ${FIRST_BUILD_RETRY_S} s.`,
        [],
        FIRST_BUILD_RETRY_S,
      );
    }
    this.catchUp();
    return this.current;
  }

  /** Starts a rebuild in the background when the store's data moved on since the live index was built. */
  private catchUp(): void {
    if (this.builtFor !== this.store.generation && !this.building) {
      this.rebuild().catch((err: unknown) => this.log?.error({ err }, 'search index rebuild failed'));
    }
  }

  /** Resolves once the saves started so far have ended (they never reject). */
  saved(): Promise<void> {
    return this.saving;
  }

  /** Store generation the live index was built from (-1 before the first build). */
  get generation(): number {
    return this.builtFor;
  }

  /**
   * The live index if it was built from the store's data as it is now; null before the first build
   * and while a rebuild after a data change is due or running. What it holds may be served in place of
   * a store read.
   */
  fresh(): CompanySearchIndex | null {
    if (!this.current) return null;
    if (this.builtFor === this.store.generation) return this.current;
    this.catchUp();
    return null;
  }

  /** Whether searches can be answered without waiting for a build. */
  get ready(): boolean {
    return this.current !== null;
  }

  /** Resolves with an index of the store's data as it is when called (a build of older data is followed by another). */
  rebuild(): Promise<CompanySearchIndex> {
    const generation = this.store.generation;
    if (this.building) {
      if (this.buildingFor === generation) return this.building;
      return this.building.catch(() => undefined).then(() => this.rebuild());
    }
    if (this.stopping.signal.aborted) return Promise.reject(new Error('search index holder is closed'));
    this.buildingFor = generation;
    this.read = 0;
    this.building = this.loadOrBuild()
      .then(({ index, shared }) => {
        this.current = index;
        this.builtFor = generation;
        if (shared) this.threads?.setIndex(generation, shared);
        return index;
      })
      .finally(() => {
        this.building = null;
      });
    return this.building;
  }

  /**
   * The index saved for the store's data as it is, or a new one built from the store and saved for
   * the next start (when the store offers a place and the data did not change during the build).
   */
  private async loadOrBuild(): Promise<{ index: CompanySearchIndex; shared: SharedSnapshot | null }> {
    const saved = this.store.derivedDataFile?.(SEARCH_INDEX_NAME) ?? null;
    if (saved) {
      const started = Date.now();
      try {
        // With threads, into shared memory, so that they search the same arrays.
        const loaded = await CompanySearchIndex.loadShared(saved.file, saved.key, this.threads !== null);
        if (loaded) {
          this.log?.info(
            { companies: loaded.index.size, ms: Date.now() - started, file: saved.file },
            'search index loaded',
          );
          return loaded;
        }
      } catch (err) {
        this.log?.warn({ err, file: saved.file }, 'saved search index unreadable; rebuilding it');
      }
    }
    this.log?.info(
      'no saved search index for the data as it is: building it from the store (a minute or more at 1M companies)',
    );
    let told = Date.now();
    const buildStarted = Date.now();
    // Saved by the thread that builds it and read back from the file (see buildSearchIndex), under a
    // temporary name until it is synced and known to be of the data as it is after the build. A save
    // of an earlier build still under way ends first: it may be writing the same temporary file.
    await this.saving;
    const pending = saved && { file: temporaryFor(saved.file), key: saved.key };
    const {
      index,
      shared,
      saved: savedByThread,
    } = await buildSearchIndex(this.store, this.log, {
      signal: this.stopping.signal,
      onRows: (n) => {
        this.read += n;
        if (Date.now() - told < PROGRESS_LOG_MS) return;
        told = Date.now();
        this.log?.info({ companies: this.read }, 'search index: companies read so far');
      },
      saveTo: pending ?? undefined,
    });
    const after = this.store.derivedDataFile?.(SEARCH_INDEX_NAME) ?? null;
    const closing = this.stopping.signal.aborted;
    const unchanged = saved && after && after.key === saved.key && after.file === saved.file;
    if (savedByThread && saved && pending) {
      const drop = () => fs.promises.rm(pending.file, { force: true }).catch(() => undefined);
      // Of data that changed during the build, it is not kept: the file may be a newer index's by now.
      if (!unchanged) await drop();
      // Searches need not wait for the sync (seconds at 1M companies), nor fail with it.
      else
        this.saving = this.saving.then(async () => {
          try {
            await syncFile(pending.file);
            await fs.promises.rename(pending.file, saved.file);
            this.log?.info({ ms: Date.now() - buildStarted, file: saved.file }, 'search index saved');
          } catch (err) {
            this.log?.warn({ err, file: saved.file }, 'could not save the search index');
            await drop();
          }
        });
    } else if (saved && unchanged && !closing) {
      const started = Date.now();
      // Saving is for the next start: searches need not wait for it, and a failure is reported, never fatal.
      this.saving = this.saving
        .then(() => index.save(saved.file, saved.key))
        .then(() => {
          this.log?.info({ ms: Date.now() - started, file: saved.file }, 'search index saved');
          // Built on a thread, the index is in shared memory already.
          if (!shared) return this.shareSaved(index, saved);
        })
        .catch((err: unknown) =>
          this.log?.warn({ err, file: saved.file }, 'could not save the search index'),
        );
    }
    return { index, shared };
  }

  /**
   * A built index, once saved, is loaded again into shared memory for the threads, and replaces the
   * built one if it is still the live index (same data, same answers).
   */
  private async shareSaved(built: CompanySearchIndex, saved: { file: string; key: string }): Promise<void> {
    if (!this.threads || this.current !== built) return;
    const generation = this.builtFor;
    const loaded = await CompanySearchIndex.loadShared(saved.file, saved.key);
    if (!loaded?.shared || this.current !== built || this.builtFor !== generation) return;
    this.current = loaded.index;
    this.threads.setIndex(generation, loaded.shared);
  }
}

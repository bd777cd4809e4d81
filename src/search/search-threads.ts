import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import type { Logger } from '../logger';
import type { SharedSnapshot } from '../store/snapshot';
import type { SearchCriteria, SearchHit, Suggestion } from './company-search';

export type SearchResult = { hits: SearchHit[]; hasMore: boolean };
export type Suggestions = Suggestion[];

/** What a search box asks for (see CompanySearchIndex.suggest). */
export interface SuggestRequest {
  query: string;
  limit: number;
  includeSubsidiaries: boolean;
}

/** What the main thread sends a search thread. */
export type SearchThreadRequest =
  | { type: 'index'; generation: number; shared: SharedSnapshot }
  | { type: 'search'; id: number; generation: number; criteria: SearchCriteria }
  | { type: 'suggest'; id: number; generation: number; suggest: SuggestRequest };

/** A search thread's answer: the result, null when it holds another generation's index, or a failure. */
export type SearchThreadReply =
  { id: number; result: SearchResult | Suggestions | null } | { id: number; error: string };

const WORKER_FILE = join(__dirname, 'search-worker.js');

/** Whether the compiled worker script is there (it is not when running from TypeScript sources). */
export function searchThreadsAvailable(): boolean {
  return workerFileAvailable(WORKER_FILE);
}

interface Thread {
  worker: Worker;
  /** Searches sent and not answered yet. */
  pending: number;
  /** The generation of the index last handed to it; -1 before any. */
  generation: number;
  live: boolean;
}

/**
 * Worker threads that search the live index beside the main thread, which one JavaScript thread
 * cannot use more than a core for. The index is handed over in shared memory (loaded with
 * CompanySearchIndex.loadShared), so each thread costs only its own small objects. A search goes
 * to the thread with the fewest searches waiting; `search` answers null when no thread holds the
 * generation asked for (or a thread failed), and the caller searches on the main thread.
 */
export class SearchThreads {
  private readonly threads: Thread[] = [];
  private readonly calls = new Map<
    number,
    { thread: Thread; done: (r: SearchResult | Suggestions | null) => void }
  >();
  private nextId = 0;

  constructor(
    count: number,
    private readonly log?: Logger,
    file = WORKER_FILE,
  ) {
    for (let i = 0; i < count; i++) {
      const thread: Thread = { worker: new Worker(file), pending: 0, generation: -1, live: true };
      thread.worker.on('message', (m: SearchThreadReply) => this.answered(m));
      thread.worker.on('error', (err) => this.lost(thread, err));
      thread.worker.on('exit', (code) => this.lost(thread, new Error(`search thread exited with ${code}`)));
      // An idle thread does not keep the process alive.
      thread.worker.unref();
      this.threads.push(thread);
    }
  }

  /** Threads that can take searches. */
  get size(): number {
    return this.threads.filter((t) => t.live).length;
  }

  /** Hands every thread the index of `generation`; searches sent after it use it. */
  setIndex(generation: number, shared: SharedSnapshot): void {
    for (const t of this.threads) {
      if (!t.live) continue;
      t.worker.postMessage({ type: 'index', generation, shared } satisfies SearchThreadRequest);
      t.generation = generation;
    }
  }

  /** The search on a thread holding `generation`'s index, or null (search on this thread then). */
  search(generation: number, criteria: SearchCriteria): Promise<SearchResult | null> {
    return this.call(generation, (id) => ({ type: 'search', id, generation, criteria }));
  }

  /** Suggestions from a thread holding `generation`'s index, or null (suggest on this thread then). */
  suggest(generation: number, suggest: SuggestRequest): Promise<Suggestions | null> {
    return this.call(generation, (id) => ({ type: 'suggest', id, generation, suggest }));
  }

  /** Sends the request to the least busy thread holding `generation`; its reply is of the request's kind. */
  private call<R extends SearchResult | Suggestions>(
    generation: number,
    request: (id: number) => SearchThreadRequest,
  ): Promise<R | null> {
    let best: Thread | null = null;
    for (const t of this.threads)
      if (t.live && t.generation === generation && (!best || t.pending < best.pending)) best = t;
    if (!best) return Promise.resolve(null);
    const thread = best;
    const id = this.nextId++;
    thread.pending++;
    return new Promise<R | null>((resolve) => {
      this.calls.set(id, { thread, done: (r) => resolve(r as R | null) });
      thread.worker.postMessage(request(id));
    });
  }

  private answered(m: SearchThreadReply): void {
    const call = this.calls.get(m.id);
    if (!call) return;
    this.calls.delete(m.id);
    call.thread.pending--;
    if ('error' in m) {
      this.log?.warn({ err: m.error }, 'a search failed on a search thread; searching on the main thread');
      call.done(null);
    } else call.done(m.result);
  }

  /** A thread that failed takes no more searches; those it held are searched on the main thread. */
  private lost(thread: Thread, err: Error): void {
    if (!thread.live) return;
    thread.live = false;
    this.log?.warn({ err }, 'a search thread stopped; its searches run on the main thread');
    for (const [id, call] of this.calls) {
      if (call.thread !== thread) continue;
      this.calls.delete(id);
      call.done(null);
    }
  }

  async close(): Promise<void> {
    const threads = this.threads.filter((t) => t.live);
    for (const t of threads) t.live = false;
    await Promise.all(threads.map((t) => t.worker.terminate()));
    for (const [id, call] of this.calls) {
      this.calls.delete(id);
      call.done(null);
    }
  }
}

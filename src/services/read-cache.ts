/**
 * A bounded cache of read results for data that changes only when a new graph
 * is imported. Entries are keyed by the store generation they were read from,
 * so an import makes every older entry unreachable at once: nothing stale is
 * ever served. Concurrent misses on one key share a single store read; failures
 * are not cached.
 *
 * Entries are kept in two generations of half the size each: new and recently
 * read entries go into `recent`, and when it is full it becomes `older` and the
 * entries of the `older` before it are dropped at once. An entry read within
 * the last half-size entries added stays, as in a least-recently-used cache,
 * and every step costs the same however many entries there are: taking the
 * oldest key from a Map's iterator, as a strict LRU on a Map does, walks over
 * every slot deleted before it, which under reads spread over many keys cost
 * up to some 30 microseconds a read (bench/README.md, 2026-12-02).
 */
export class ReadCache {
  private recent = new Map<string, Promise<unknown>>();
  private older = new Map<string, Promise<unknown>>();
  /** Entries `recent` holds before it turns into `older`: half the cache, or one. */
  private readonly turnAt: number;
  /** Whether a turn keeps `recent` as `older`: not in a cache of one, which holds a single entry. */
  private readonly keepsOlder: boolean;
  private generation = -1;

  constructor(
    private readonly maxEntries: number,
    private readonly currentGeneration: () => number,
  ) {
    this.turnAt = Math.max(1, Math.floor(maxEntries / 2));
    this.keepsOlder = maxEntries > 1;
  }

  /** Entries held, at most `maxEntries`. */
  get size(): number {
    return this.recent.size + this.older.size;
  }

  /** The cached value of `key`, or `load()`'s (remembered when it succeeds). */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.maxEntries === 0) return load();
    const generation = this.currentGeneration();
    if (generation !== this.generation) {
      this.recent = new Map();
      this.older = new Map();
      this.generation = generation;
    }
    let cached = this.recent.get(key);
    if (!cached) {
      cached = this.older.get(key);
      // Read again: kept for another turn (an entry is in one generation only).
      if (cached) {
        this.older.delete(key);
        this.add(key, cached);
      }
    }
    if (cached) return cached as Promise<T>;
    const pending = load();
    this.add(key, pending);
    pending.catch(() => {
      if (this.recent.get(key) === pending) this.recent.delete(key);
      if (this.older.get(key) === pending) this.older.delete(key);
    });
    return pending;
  }

  private add(key: string, value: Promise<unknown>): void {
    if (this.recent.size >= this.turnAt) {
      this.older = this.keepsOlder ? this.recent : new Map<string, Promise<unknown>>();
      this.recent = new Map();
    }
    this.recent.set(key, value);
  }
}

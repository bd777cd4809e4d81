/**
 * A bounded cache of read results for data that changes only when a new graph
 * is imported. Entries are keyed by the store generation they were read from,
 * so an import makes every older entry unreachable at once: nothing stale is
 * ever served. Concurrent misses on one key share a single store read; failures
 * are not cached.
 */
export class ReadCache {
  private readonly entries = new Map<string, Promise<unknown>>();
  private generation = -1;
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly currentGeneration: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached value of `key`, or `load()`'s (remembered when it succeeds). */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.maxEntries === 0) return load();
    const generation = this.currentGeneration();
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
    const cached = this.entries.get(key);
    if (cached) {
      // Re-insert to mark as recently used (Map keeps insertion order).
      this.entries.delete(key);
      this.entries.set(key, cached);
      this.hits++;
      return cached as Promise<T>;
    }
    this.misses++;
    const pending = load();
    this.entries.set(key, pending);
    pending.catch(() => {
      if (this.entries.get(key) === pending) this.entries.delete(key);
    });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return pending;
  }
}

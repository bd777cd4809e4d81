/** Caches of pure functions of strings, and the copies they keep. */

/**
 * A copy of s that shares no memory with it. Values cut from a file chunk keep
 * the whole multi-megabyte chunk alive while they are referenced, so a cache
 * that outlives the chunk must hold copies.
 */
export function detach(s: string): string {
  // JSON round trip: a fresh string for any input, lone surrogates included.
  return s.length === 0 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/**
 * Remembers the results of a pure check for recently seen values: countries,
 * codes and domains repeat millions of times in real files. Failures are not
 * remembered; the cache is dropped when it reaches `max` entries.
 */
export function memoize(fn: (v: string) => string, max = 4096): (v: string) => string {
  let cache = new Map<string, string>();
  return (v) => {
    let r = cache.get(v);
    if (r === undefined) {
      r = fn(v);
      if (cache.size >= max) cache = new Map();
      cache.set(detach(v), detach(r));
    }
    return r;
  };
}

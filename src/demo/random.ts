/**
 * Seeded randomness and opaque ids for the dataset generator. Everything here is
 * a pure function of its inputs so that a seed reproduces a dataset byte for byte.
 */

/** One step of splitmix32: spreads a small seed over all 32 bits. */
function splitmix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  let z = x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * Small fast PRNG (sfc32) with independent streams: the same seed and stream
 * always yield the same sequence, different streams are uncorrelated.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    let s = splitmix32((seed >>> 0) ^ Math.imul(stream + 1, 0x27d4eb2d));
    this.a = s;
    s = splitmix32(s);
    this.b = s;
    s = splitmix32(s);
    this.c = s;
    s = splitmix32(s);
    this.d = s | 1;
    // The first outputs of sfc32 still echo the seed; discard them.
    for (let i = 0; i < 16; i++) this.u32();
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const t0 = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    const t = (t0 + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)] as T;
  }
}

/**
 * Picks from a fixed list with fixed weights in O(log n) using cumulative sums.
 */
export class WeightedPicker<T> {
  private readonly cum: Float64Array;
  private readonly total: number;

  constructor(
    private readonly items: readonly T[],
    weights: ArrayLike<number>,
  ) {
    this.cum = new Float64Array(weights.length);
    let acc = 0;
    for (let i = 0; i < weights.length; i++) {
      acc += weights[i] ?? 0;
      this.cum[i] = acc;
    }
    this.total = acc;
  }

  /** Index of the chosen item for a uniform draw u in [0, 1). */
  index(u: number): number {
    const x = u * this.total;
    const cum = this.cum;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cum[mid] as number) > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The chosen item for a draw from rng. */
  pick(rng: Rng): T {
    return this.items[this.index(rng.next())] as T;
  }
}

const MASK30 = 0x3fffffff;

/**
 * A keyed bijection on [0, 2^30): distinct inputs give distinct outputs, so ids
 * built from it never collide, yet consecutive inputs look unrelated.
 */
export function permute30(x: number, key: number): number {
  let v = (x ^ key) & MASK30;
  v = Math.imul(v, 0x2545f491) & MASK30;
  v ^= v >>> 15;
  v = (v + (key >>> 2)) & MASK30;
  v = Math.imul(v, 0x6b3a2c5d) & MASK30;
  v ^= v >>> 13;
  v = Math.imul(v, 0x1b873593) & MASK30;
  v ^= v >>> 16;
  return v;
}

/** Crockford's base32 alphabet in lower case: no i, l, o, u; safe in URL paths. */
const B32 = '0123456789abcdefghjkmnpqrstvwxyz';

/** All two-character base32 strings, indexed by their 10-bit value. */
const PAIRS: string[] = Array.from({ length: 1024 }, (_, v) => B32.charAt(v >>> 5) + B32.charAt(v & 31));

/** Six base32 characters for a 30-bit value. */
export function base32x6(v: number): string {
  return (
    (PAIRS[(v >>> 20) & 1023] as string) + (PAIRS[(v >>> 10) & 1023] as string) + (PAIRS[v & 1023] as string)
  );
}

/**
 * Deterministic opaque id: a one-letter kind prefix and six base32 characters,
 * e.g. `c4k9m2x`. Unique per (prefix, index) for a given key.
 */
export function opaqueId(prefix: string, index: number, key: number): string {
  return prefix + base32x6(permute30(index, key));
}

/** Derives a 32-bit key for one kind of id from the dataset seed. */
export function idKey(seed: number, kind: number): number {
  return splitmix32((seed >>> 0) ^ Math.imul(kind + 7, 0x165667b1));
}

/** A 32-bit mix of (key, i) as a uniform number in [0, 1): randomness that needs no stream state. */
export function unitHash(key: number, i: number): number {
  let h = Math.imul(i ^ key, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h ^ key, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

function roundFn(r: number, key: number, round: number): number {
  let h = Math.imul(r ^ key, 0x2c1b3c6d) ^ Math.imul(round + 1, 0x297a2d39);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/**
 * Keyed bijection on [0, 2^(2*halfBits)) (a four-round Feistel network), for
 * index spaces wider than 32 bits; halfBits is at most 26.
 */
export function feistel(x: number, halfBits: number, key: number): number {
  const half = 2 ** halfBits;
  const mask = half - 1;
  let l = Math.floor(x / half);
  let r = x % half;
  for (let round = 0; round < 4; round++) {
    const f = roundFn(r, key, round) & mask;
    const nl = r;
    r = (l ^ f) & mask;
    l = nl;
  }
  return l * half + r;
}

/** Fixed-width base32 text (at least 6 characters) of a non-negative integer below 2^53. */
export function base32(v: number, chars: number): string {
  const lo = base32x6(v % 0x40000000);
  let hi = Math.floor(v / 0x40000000);
  let out = '';
  for (let i = 6; i < chars; i++) {
    out = B32.charAt(hi & 31) + out;
    hi >>>= 5;
  }
  return out + lo;
}

/** A 32-bit mix of a number below 2^53, e.g. to derive a second opaque token from an id. */
export function mix32(v: number): number {
  let h = (v % 0x100000000) ^ Math.imul(Math.floor(v / 0x100000000), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

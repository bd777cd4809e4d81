import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';

/**
 * A read-only map from strings to ascending lists of numbers, held in typed arrays outside the
 * JavaScript heap. At a million companies the search filters' keys (cities, identifiers, hosts,
 * industries) number millions; as a Map of arrays they cost the heap about 290 MB and every full
 * collection has to walk them. Here they cost their UTF-8 bytes and about 16 bytes per key:
 * - `keys`: every key's UTF-8 bytes, concatenated; key k is `keys[keyStart[k], keyStart[k + 1])`;
 * - `values`: every key's list, concatenated; key k's is `values[valueStart[k], valueStart[k + 1])`;
 * - `slots`: an open-addressing table (linear probing, at most half full) of 1 + k by the FNV-1a hash
 *   of the key's bytes; 0 is an empty slot.
 */
export class KeyedLists {
  private constructor(
    private readonly keys: Buffer,
    private readonly keyStart: Uint32Array,
    private readonly valueStart: Uint32Array,
    private readonly values: Uint32Array,
    private readonly slots: Uint32Array,
  ) {}

  /** The lists of `m`, each sorted ascending. */
  static from(m: ReadonlyMap<string, readonly number[]>): KeyedLists {
    const b = new KeyedListsBuilder();
    for (const [key, list] of m) {
      b.key(key);
      for (const value of list) b.add(key, value);
    }
    return b.build();
  }

  /** Lists laid out by {@link KeyedListsBuilder.build}. */
  static of(keys: Buffer, keyStart: Uint32Array, valueStart: Uint32Array, values: Uint32Array): KeyedLists {
    const n = keyStart.length - 1;
    let size = 16;
    while (size < n * 2) size *= 2;
    return new KeyedLists(keys, keyStart, valueStart, values, slotsOf(keys, keyStart, n, size));
  }

  /** Number of keys. */
  get size(): number {
    return this.keyStart.length - 1;
  }

  /** The list of `key` (a view: do not change it), or undefined when the key is not held. */
  get(key: string): Uint32Array | undefined {
    const wanted = Buffer.from(key, 'utf8');
    const mask = this.slots.length - 1;
    for (let slot = hashBytes(wanted, 0, wanted.length) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return undefined;
      const k = entry - 1;
      const start = this.keyStart[k]!;
      const end = this.keyStart[k + 1]!;
      if (end - start === wanted.length && wanted.compare(this.keys, start, end) === 0) {
        return this.values.subarray(this.valueStart[k], this.valueStart[k + 1]);
      }
    }
  }

  /** Saves the lists (see {@link KeyedLists.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.bytes(this.keys).array(this.keyStart).array(this.valueStart).array(this.values).array(this.slots);
  }

  /**
   * Lists saved by {@link KeyedLists.writeTo}, viewed in place; null when the parts disagree. The
   * table is checked slot by slot: a lookup probes until it meets an empty slot, so a table
   * without one, or of a size that is not a power of two, would never answer.
   */
  static readFrom(r: SnapshotReader): KeyedLists | null {
    const keys = r.bytes();
    const keyStart = r.u32();
    const valueStart = r.u32();
    const values = r.u32();
    const slots = r.u32();
    const n = keyStart.length - 1;
    if (
      n < 0 ||
      valueStart.length !== n + 1 ||
      keyStart[n] !== keys.length ||
      valueStart[n] !== values.length ||
      slots.length < 2 * n ||
      slots.length === 0 ||
      (slots.length & (slots.length - 1)) !== 0
    ) {
      return null;
    }
    let used = 0;
    for (const entry of slots) {
      if (entry > n) return null;
      if (entry !== 0) used++;
    }
    if (used !== n) return null;
    return new KeyedLists(keys, keyStart, valueStart, values, slots);
  }
}

/**
 * The open-addressing table (linear probing) of `size` slots, a power of two, for keys [0, n): each
 * key's slot holds 1 + its number, found from the FNV-1a hash of its bytes; 0 is an empty slot.
 */
function slotsOf(keys: Buffer, keyStart: Uint32Array, n: number, size: number): Uint32Array<ArrayBuffer> {
  const slots = new Uint32Array(size);
  const mask = size - 1;
  for (let i = 0; i < n; i++) {
    let slot = hashBytes(keys, keyStart[i]!, keyStart[i + 1]!) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = i + 1;
  }
  return slots;
}

/** FNV-1a over bytes [from, to) of `b`. */
function hashBytes(b: Buffer, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * Gathers {@link KeyedLists} one value at a time, as a build reads its rows, without an array per key:
 * at a million companies the keys number millions, most with one value. Keys keep the order in which
 * they were first given; a value given again right after itself for the same key is kept once.
 *
 * The keys are held as UTF-8 bytes with an open-addressing table of their own (as the lists are, once
 * built), not in a Map of strings: at 1M companies a Map and a string per key held some 160 MB of
 * the build thread's heap (bench/README.md, 2026-12-01, evening), which each of its full
 * collections marked, and a Map lookup cost more than hashing a few bytes. A key is encoded into a
 * scratch buffer, hashed (FNV-1a, as the built lists hash) and compared byte by byte; so keys whose
 * UTF-8 is the same (strings differing only in lone surrogates, which encode as U+FFFD) are one key,
 * as a lookup in the built lists sees them.
 */
export class KeyedListsBuilder {
  /** The keys' UTF-8 bytes, concatenated; key k is `keys[keyStart[k], keyStart[k + 1])`. */
  private keys = Buffer.allocUnsafeSlow(1 << 16);
  private keyStart = new Uint32Array(1024);
  private count = 0;
  /** Open addressing, linear probing, at most half full: 1 + key id, 0 for an empty slot. */
  private slots = new Uint32Array(2048);
  /** The key being looked up, encoded. */
  private scratch = Buffer.allocUnsafeSlow(256);
  /** Per key id, its last value (to drop repeats and see whether the values came in order). */
  private last = new Float64Array(1024);
  /** Key id and value of every pair, in the order given. */
  private pairKey = new Uint32Array(4096);
  private pairValue = new Uint32Array(4096);
  private pairs = 0;
  private ascending = true;

  /** The id of `key`, given one now if it is new (with no value yet). */
  key(key: string): number {
    if (key.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(key.length * 3);
    const scratch = this.scratch;
    const length = scratch.write(key, 0, 'utf8');
    const mask = this.slots.length - 1;
    let slot = hashBytes(scratch, 0, length) & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) break;
      if (this.holds(entry - 1, length)) return entry - 1;
      slot = (slot + 1) & mask;
    }
    const id = this.count++;
    const from = this.keyStart[id]!;
    if (from + length > this.keys.length) {
      const keys = Buffer.allocUnsafeSlow(Math.max(this.keys.length * 2, from + length));
      this.keys.copy(keys, 0, 0, from);
      this.keys = keys;
    }
    scratch.copy(this.keys, from, 0, length);
    if (id + 1 === this.keyStart.length) {
      this.keyStart = widened(this.keyStart);
      const last = new Float64Array(this.keyStart.length);
      last.set(this.last);
      this.last = last;
    }
    this.keyStart[id + 1] = from + length;
    this.last[id] = -1;
    this.slots[slot] = id + 1;
    if (this.count * 2 > this.slots.length) this.growSlots();
    return id;
  }

  /** Whether key `id` is the `length` bytes in the scratch buffer. */
  private holds(id: number, length: number): boolean {
    const from = this.keyStart[id]!;
    if (this.keyStart[id + 1]! - from !== length) return false;
    const keys = this.keys;
    const scratch = this.scratch;
    for (let i = 0; i < length; i++) if (keys[from + i] !== scratch[i]) return false;
    return true;
  }

  private growSlots(): void {
    this.slots = slotsOf(this.keys, this.keyStart, this.count, this.slots.length * 2);
  }

  /** Adds `value` (an integer from 0 to 2^32 - 1) to the list of `key`. */
  add(key: string, value: number): void {
    const id = this.key(key);
    const last = this.last[id]!;
    if (last === value) return;
    if (value < last) this.ascending = false;
    this.last[id] = value;
    if (this.pairs === this.pairKey.length) {
      this.pairKey = widened(this.pairKey);
      this.pairValue = widened(this.pairValue);
    }
    this.pairKey[this.pairs] = id;
    this.pairValue[this.pairs++] = value;
  }

  build(): KeyedLists {
    const n = this.count;
    const keyStart = this.keyStart.slice(0, n + 1);
    const keys = Buffer.allocUnsafeSlow(keyStart[n]!);
    this.keys.copy(keys, 0, 0, keyStart[n]);
    const valueStart = new Uint32Array(n + 1);
    for (let p = 0; p < this.pairs; p++) valueStart[this.pairKey[p]! + 1]!++;
    for (let k = 0; k < n; k++) valueStart[k + 1]! += valueStart[k]!;
    const fill = valueStart.slice(0, n);
    const values = new Uint32Array(this.pairs);
    for (let p = 0; p < this.pairs; p++) values[fill[this.pairKey[p]!]!++] = this.pairValue[p]!;
    if (!this.ascending) for (let k = 0; k < n; k++) values.subarray(valueStart[k], valueStart[k + 1]).sort();
    return KeyedLists.of(keys, keyStart, valueStart, values);
  }
}

function widened(a: Uint32Array): Uint32Array<ArrayBuffer> {
  const next = new Uint32Array(a.length * 2);
  next.set(a);
  return next;
}

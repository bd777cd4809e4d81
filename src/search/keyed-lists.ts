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
    const slots = new Uint32Array(size);
    const mask = size - 1;
    for (let i = 0; i < n; i++) {
      let slot = hashBytes(keys, keyStart[i]!, keyStart[i + 1]!) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
    return new KeyedLists(keys, keyStart, valueStart, values, slots);
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

/** FNV-1a over bytes [from, to) of `b`. */
function hashBytes(b: Buffer, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * Gathers {@link KeyedLists} one value at a time, as a build reads its rows, without an array per key:
 * at a million companies the keys number millions, most with one value, and a Map of arrays made the
 * collector walk them all through the build. Keys keep the order in which they were first given; a
 * value given again right after itself for the same key is kept once.
 */
export class KeyedListsBuilder {
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [];
  /** Per key id, its last value (to drop repeats and see whether the values came in order). */
  private last = new Float64Array(1024);
  /** Key id and value of every pair, in the order given. */
  private pairKey = new Uint32Array(4096);
  private pairValue = new Uint32Array(4096);
  private pairs = 0;
  private ascending = true;

  /** The id of `key`, given one now if it is new (with no value yet). */
  key(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(key, id);
      this.names.push(key);
      if (id === this.last.length) {
        const last = new Float64Array(id * 2);
        last.set(this.last);
        this.last = last;
      }
      this.last[id] = -1;
    }
    return id;
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
    const n = this.names.length;
    const keyStart = new Uint32Array(n + 1);
    for (let k = 0; k < n; k++) keyStart[k + 1] = keyStart[k]! + Buffer.byteLength(this.names[k]!, 'utf8');
    const keys = Buffer.allocUnsafe(keyStart[n]!);
    for (let k = 0; k < n; k++) keys.write(this.names[k]!, keyStart[k]!, 'utf8');
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

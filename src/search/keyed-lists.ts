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
    const encoded: Buffer[] = [];
    const keyStart = new Uint32Array(m.size + 1);
    const valueStart = new Uint32Array(m.size + 1);
    let k = 0;
    let bytes = 0;
    let count = 0;
    for (const [key, list] of m) {
      const b = Buffer.from(key, 'utf8');
      encoded.push(b);
      bytes += b.length;
      count += list.length;
      keyStart[++k] = bytes;
      valueStart[k] = count;
    }
    const keys = Buffer.concat(encoded, bytes);
    const values = new Uint32Array(count);
    k = 0;
    for (const list of m.values()) {
      const part = values.subarray(valueStart[k], valueStart[k + 1]);
      part.set(list);
      part.sort();
      k++;
    }
    let size = 16;
    while (size < m.size * 2) size *= 2;
    const slots = new Uint32Array(size);
    const mask = size - 1;
    for (let i = 0; i < m.size; i++) {
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

/**
 * The open-addressing table both indexes share: pairs of (hash, number + 1),
 * number + 1 = 0 marking an empty slot. Each index probes it with its own key
 * comparison; claiming a slot and growing are the same for both.
 */
abstract class HashSlots {
  protected table: Int32Array;
  protected mask: number;
  protected pendingSlot = -1;
  protected pendingHash = 0;

  constructor(expected: number) {
    let cap = 1024;
    while (cap < expected * 2) cap *= 2;
    this.table = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  /** The slot the last failed get() stopped at; throws when there was none. */
  protected takePendingSlot(): number {
    const slot = this.pendingSlot;
    if (slot < 0) throw new Error(`${this.constructor.name}.commit without a failed get`);
    this.pendingSlot = -1;
    return slot;
  }

  /** Puts number i into `slot` and grows the table once `count` keys fill half of it. */
  protected place(slot: number, i: number, count: number): void {
    this.table[2 * slot] = this.pendingHash;
    this.table[2 * slot + 1] = i + 1;
    if (count * 2 > this.mask + 1) this.grow();
  }

  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const table = new Int32Array(cap * 2);
    const mask = cap - 1;
    const old = this.table;
    for (let k = 0; k < old.length; k += 2) {
      const v = old[k + 1] as number;
      if (v === 0) continue;
      const h = old[k] as number;
      let slot = h & mask;
      while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      table[2 * slot] = h;
      table[2 * slot + 1] = v;
    }
    this.table = table;
    this.mask = mask;
  }
}

/**
 * Dense numbering of distinct strings (ids) with an open-addressing hash table.
 * A plain Map stops at 2^24 entries and costs far more memory per key; imports
 * of tens of millions of evidence ids need neither limit. The table keeps each
 * key's hash next to its number, so probing rarely touches the strings.
 */
export class StringIndex extends HashSlots {
  private readonly keys: string[] = [];

  constructor(expected = 1024) {
    super(expected);
  }

  /** Number of distinct strings added. */
  get size(): number {
    return this.keys.length;
  }

  /** The string with number i. */
  key(i: number): string {
    return this.keys[i] as string;
  }

  /**
   * Number of s, or -1 when it was never added. After -1, commit(s) adds s
   * without hashing again, provided nothing else was probed or added in between.
   */
  get(s: string): number {
    const h = hash(s);
    const table = this.table;
    const mask = this.mask;
    let slot = h & mask;
    for (;;) {
      const v = table[2 * slot + 1] as number;
      if (v === 0) {
        this.pendingSlot = slot;
        this.pendingHash = h;
        return -1;
      }
      if (table[2 * slot] === h && this.keys[v - 1] === s) return v - 1;
      slot = (slot + 1) & mask;
    }
  }

  /** Adds s, which the last get() reported missing; returns its number. */
  commit(s: string): number {
    const slot = this.takePendingSlot();
    this.keys.push(s);
    const n = this.keys.length;
    this.place(slot, n - 1, n);
    return n - 1;
  }

  /** Number of s, adding it when new. */
  add(s: string): number {
    const i = this.get(s);
    return i >= 0 ? i : this.commit(s);
  }
}

/** FNV-1a over UTF-16 code units with a final avalanche, so linear probing stays short. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

/**
 * Like StringIndex, for ASCII keys (ids are checked to be ASCII before they
 * get here), but the keys live as bytes outside the JS heap: millions of
 * small strings kept for the whole import would make every full garbage
 * collection walk them all.
 */
export class AsciiIndex extends HashSlots {
  private bytes: Buffer = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private start = new Float64Array(1024);
  private n = 0;

  constructor(expected = 1024) {
    super(expected);
  }

  /** Number of distinct keys added. */
  get size(): number {
    return this.n;
  }

  /** The index as plain arrays, for another thread (AsciiIndex.from): copies, so this one stays usable. */
  snapshot(): AsciiIndexSnapshot {
    return {
      table: this.table.slice(),
      bytes: new Uint8Array(this.bytes.subarray(0, this.used)),
      start: this.start.slice(0, this.n + 1),
      n: this.n,
    };
  }

  /** An index equal to the one a snapshot was taken of. */
  static from(s: AsciiIndexSnapshot): AsciiIndex {
    const ix = new AsciiIndex();
    ix.table = s.table;
    ix.mask = s.table.length / 2 - 1;
    ix.bytes = Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength);
    ix.used = s.bytes.byteLength;
    ix.start = s.start;
    ix.n = s.n;
    return ix;
  }

  /** All keys decoded at once; slicing it is much cheaper than decoding keys one by one. */
  private all: string | null = null;

  /** The key with number i. */
  key(i: number): string {
    if (this.all === null) this.all = this.bytes.toString('latin1', 0, this.used);
    return this.all.slice(this.start[i], this.start[i + 1]);
  }

  /** Byte range [begin, end) of key i inside buffer(). */
  begin(i: number): number {
    return this.start[i] as number;
  }

  end(i: number): number {
    return this.start[i + 1] as number;
  }

  /** The buffer holding the keys; valid until the next commit(). */
  buffer(): Buffer {
    return this.bytes;
  }

  private equals(i: number, s: string): boolean {
    const b = this.start[i] as number;
    if ((this.start[i + 1] as number) - b !== s.length) return false;
    const bytes = this.bytes;
    for (let k = 0; k < s.length; k++) if (bytes[b + k] !== s.charCodeAt(k)) return false;
    return true;
  }

  /** Number of s, or -1 (then commit(s) may follow, as with StringIndex). */
  get(s: string): number {
    const h = hash(s);
    const table = this.table;
    const mask = this.mask;
    let slot = h & mask;
    for (;;) {
      const v = table[2 * slot + 1] as number;
      if (v === 0) {
        this.pendingSlot = slot;
        this.pendingHash = h;
        return -1;
      }
      if (table[2 * slot] === h && this.equals(v - 1, s)) return v - 1;
      slot = (slot + 1) & mask;
    }
  }

  /** Adds s, which the last get() reported missing; returns its number. */
  commit(s: string): number {
    const slot = this.takePendingSlot();
    if (this.used + s.length > this.bytes.length) {
      const b = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + s.length));
      this.bytes.copy(b, 0, 0, this.used);
      this.bytes = b;
    }
    this.used += this.bytes.write(s, this.used, 'latin1');
    this.all = null;
    const i = this.n++;
    if (this.n + 1 > this.start.length) {
      const st = new Float64Array(this.start.length * 2);
      st.set(this.start);
      this.start = st;
    }
    this.start[i + 1] = this.used;
    this.place(slot, i, this.n);
    return i;
  }
}

/** What AsciiIndex.snapshot gives: structured-clonable arrays. */
export interface AsciiIndexSnapshot {
  table: Int32Array<ArrayBuffer>;
  bytes: Uint8Array<ArrayBuffer>;
  start: Float64Array<ArrayBuffer>;
  n: number;
}

/**
 * A 52-bit fingerprint of a string, exact as a JS number: two independent
 * 32-bit hashes, for cheap duplicate detection by sorting.
 */
export function fingerprint(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  return (a >>> 0) * 1048576 + (b >>> 12);
}

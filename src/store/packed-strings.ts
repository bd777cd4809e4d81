import type { SnapshotReader, SnapshotWriter } from './snapshot';
import { hashOfBytes } from './string-hash';

/**
 * A read-only column of strings (or nulls) held as UTF-8 bytes in one buffer, outside the
 * JavaScript heap. A million names as strings cost the heap some 50 bytes each and every full
 * collection walks them; packed, they cost their bytes plus five, and a string is made only when
 * it is read.
 */
export class PackedStrings {
  private constructor(
    private readonly text: Buffer,
    /** Value i is `text[start[i], start[i + 1])`. */
    private readonly start: Uint32Array,
    /** 1 where the value is null. */
    private readonly nulls: Uint8Array,
  ) {}

  static from(values: readonly (string | null | undefined)[]): PackedStrings {
    const n = values.length;
    const start = new Uint32Array(n + 1);
    const nulls = new Uint8Array(n);
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) nulls[i] = 1;
      else bytes += Buffer.byteLength(v, 'utf8');
      start[i + 1] = bytes;
    }
    const text = Buffer.allocUnsafe(bytes);
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v !== null && v !== undefined) text.write(v, start[i]!, 'utf8');
    }
    return new PackedStrings(text, start, nulls);
  }

  get length(): number {
    return this.nulls.length;
  }

  /** Value i; null when it was null or undefined, or i is out of range. */
  get(i: number): string | null {
    const from = this.start[i];
    const to = this.start[i + 1];
    if (from === undefined || to === undefined || this.nulls[i] === 1) return null;
    return this.text.toString('utf8', from, to);
  }

  /**
   * Whether value i is `s`, compared on the bytes: no string is made unless `s` has a character
   * beyond ASCII (a hash table probing its slots asks this of several values per lookup).
   */
  equals(i: number, s: string): boolean {
    const from = this.start[i];
    const to = this.start[i + 1];
    if (from === undefined || to === undefined || this.nulls[i] === 1) return false;
    // UTF-8 never takes fewer bytes than UTF-16 takes code units.
    if (to - from < s.length) return false;
    const text = this.text;
    for (let k = 0; k < s.length; k++) {
      const c = s.charCodeAt(k);
      if (c >= 0x80) return this.get(i) === s;
      if (text[from + k] !== c) return false;
    }
    return to - from === s.length;
  }

  /** fnv1a of value i (of the empty text when it is null), from its bytes: no string is made unless it is not ASCII. */
  hash(i: number): number {
    const from = this.start[i] ?? 0;
    const to = this.nulls[i] === 1 ? from : (this.start[i + 1] ?? from);
    return hashOfBytes(this.text, from, to);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.text.length + this.start.byteLength + this.nulls.byteLength;
  }

  /** Saves the column (see {@link PackedStrings.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.bytes(this.text).array(this.start).array(this.nulls);
  }

  /** A column saved by {@link PackedStrings.writeTo}, viewed in place; null when its parts disagree. */
  static readFrom(r: SnapshotReader): PackedStrings | null {
    const text = r.bytes();
    const start = r.u32();
    const nulls = r.u8();
    if (start.length !== nulls.length + 1 || start[nulls.length] !== text.length) return null;
    return new PackedStrings(text, start, nulls);
  }
}

import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';

/**
 * Many small JSON records held in a few large buffers. A million records as
 * objects or strings would cost the heap several times their size and keep the
 * collector busy; packed, they cost their UTF-8 bytes plus three numbers each,
 * outside the heap, and one is parsed only when it is read.
 */
const CHUNK_BYTES = 8 * 1024 * 1024;

export class PackedRecordsBuilder {
  private readonly chunks: Buffer[] = [];
  private current = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private readonly chunkOf: number[] = [];
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];

  /** Appends a record; records are numbered from 0 in the order they are added. */
  add(record: unknown): void {
    this.addText(JSON.stringify(record));
  }

  /** Appends a record given as its JSON text. */
  addText(text: string): void {
    const bytes = Buffer.byteLength(text);
    this.room(bytes);
    this.current.write(text, this.used);
    this.record(bytes);
  }

  /**
   * Appends a record whose JSON text is the UTF-8 bytes `head` followed by `tail`: a record completed
   * from one packed before it (PackedRecords.bytesOf) is copied as bytes, not decoded and encoded again.
   */
  addJoined(head: Uint8Array, tail: string): void {
    const bytes = head.length + Buffer.byteLength(tail);
    this.room(bytes);
    this.current.set(head, this.used);
    this.current.write(tail, this.used + head.length);
    this.record(bytes);
  }

  /** Makes room for a record of `bytes` in the current chunk. */
  private room(bytes: number): void {
    if (this.used + bytes <= this.current.length) return;
    this.seal();
    this.current = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.used = 0;
  }

  /** Numbers the record of `bytes` just written at the end of the current chunk. */
  private record(bytes: number): void {
    this.chunkOf.push(this.chunks.length);
    this.starts.push(this.used);
    this.lengths.push(bytes);
    this.used += bytes;
  }

  private seal(): void {
    if (this.used === 0) return;
    // A full chunk is kept as it is: its unused tail is less than the record that did not fit. A chunk
    // sealed with much of it unused (the last) gives it back: only its written bytes are copied.
    const full = this.current.length - this.used < this.current.length / 8;
    const written = this.current.subarray(0, this.used);
    this.chunks.push(full ? written : Buffer.from(written));
  }

  build(): PackedRecords {
    this.seal();
    // The sealed chunk may be kept as it is: a record added after this goes to a chunk of its own.
    this.current = Buffer.alloc(0);
    this.used = 0;
    return new PackedRecords(
      this.chunks,
      Uint32Array.from(this.chunkOf),
      Uint32Array.from(this.starts),
      Uint32Array.from(this.lengths),
    );
  }
}

export class PackedRecords {
  constructor(
    private readonly chunks: readonly Buffer[],
    private readonly chunkOf: Uint32Array,
    private readonly starts: Uint32Array,
    private readonly lengths: Uint32Array,
  ) {}

  get size(): number {
    return this.starts.length;
  }

  /** Saves the records (see {@link PackedRecords.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.json(this.chunks.length);
    for (const c of this.chunks) w.bytes(c);
    w.array(this.chunkOf).array(this.starts).array(this.lengths);
  }

  /** Records saved by {@link PackedRecords.writeTo}, their bytes viewed in place. */
  static readFrom(r: SnapshotReader): PackedRecords {
    const count = r.json<number>();
    const chunks = Array.from({ length: count }, () => r.bytes());
    return new PackedRecords(chunks, r.u32(), r.u32(), r.u32());
  }

  /** Bytes held, for logs. */
  get bytes(): number {
    return this.chunks.reduce((n, c) => n + c.length, 0);
  }

  /** The UTF-8 bytes of record `i`'s JSON text, viewed where they are held. */
  bytesOf(i: number): Buffer {
    const start = this.starts[i]!;
    return this.chunks[this.chunkOf[i]!]!.subarray(start, start + this.lengths[i]!);
  }

  /** The JSON text of record `i`. */
  text(i: number): string {
    const start = this.starts[i]!;
    return this.chunks[this.chunkOf[i]!]!.toString('utf8', start, start + this.lengths[i]!);
  }

  /** Record `i` as it was added (through JSON), or undefined beyond the last. */
  get<T>(i: number): T | undefined {
    if (!(i >= 0 && i < this.starts.length)) return undefined;
    return JSON.parse(this.text(i)) as T;
  }
}

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
    if (this.used + bytes > this.current.length) {
      this.seal();
      this.current = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
      this.used = 0;
    }
    this.current.write(text, this.used);
    this.chunkOf.push(this.chunks.length);
    this.starts.push(this.used);
    this.lengths.push(bytes);
    this.used += bytes;
  }

  private seal(): void {
    // The unused tail is given back: only the written bytes are kept.
    if (this.used > 0) this.chunks.push(Buffer.from(this.current.subarray(0, this.used)));
  }

  build(): PackedRecords {
    this.seal();
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

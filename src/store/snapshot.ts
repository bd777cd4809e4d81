import fs from 'node:fs';
import path from 'node:path';
import { MAX_IO_BYTES, openIfThere, readExactly, readExactlyAsync, temporaryFor } from './file-io';

/**
 * A binary file of typed arrays, string lists and small JSON values, written and
 * read back in the same order: the format of data derived from a graph generation
 * and saved beside it (GraphStore.derivedDataFile). The search index and the
 * embedded store's walk memory save themselves in one so that a restart loads
 * them in seconds instead of reading the graph again. Each section is read from the file when it is asked for, straight into
 * its own array: no parse, and no limit on the file's size (reading the whole
 * file into one buffer fails beyond 2 GiB, about 2 million companies).
 *
 * Layout: MAGIC, a little-endian u32 header length, the header (JSON: the
 * caller's key and the sections' kinds, offsets and lengths), then each
 * section's bytes at an 8-byte-aligned offset.
 */
const MAGIC = Buffer.from('TGSNAP1\n');
const ALIGN = 8;

export type ArrayKind = 'i8' | 'u8' | 'u16' | 'u32' | 'i32' | 'f64';
type Kind = ArrayKind | 'json' | 'bytes';
type Typed = Int8Array | Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

interface Section {
  kind: Kind;
  /** Offset of the section's bytes from the end of the header. */
  at: number;
  bytes: number;
}

interface Header {
  key: string;
  sections: Section[];
}

const CTORS = {
  i8: Int8Array,
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f64: Float64Array,
} as const;

function kindOf(a: Typed): ArrayKind {
  if (a instanceof Int8Array) return 'i8';
  if (a instanceof Uint8Array) return 'u8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  return 'f64';
}

export class SnapshotWriter {
  /** Each section's bytes; the padding between them follows from the sections' offsets. */
  private readonly parts: Buffer[] = [];
  private readonly sections: Section[] = [];
  private size = 0;

  private add(kind: Kind, bytes: Buffer): void {
    this.size += (ALIGN - (this.size % ALIGN)) % ALIGN;
    this.sections.push({ kind, at: this.size, bytes: bytes.length });
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  array(a: Typed): this {
    this.add(kindOf(a), Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    return this;
  }

  /** Raw bytes, read back as a Buffer. */
  bytes(b: Buffer): this {
    this.add('bytes', b);
    return this;
  }

  /** Any JSON value (string lists included). */
  json(value: unknown): this {
    this.add('json', Buffer.from(JSON.stringify(value)));
    return this;
  }

  /**
   * The sections in shared memory, as SnapshotReader.open with `shared` gives them after reading
   * the saved file: another thread can read the snapshot (SnapshotReader.fromShared) without a file.
   */
  toShared(): SharedSnapshot {
    return {
      sections: this.sections.map((s, i) => {
        const bytes = new SharedArrayBuffer(s.bytes);
        this.parts[i]!.copy(Buffer.from(bytes));
        return { kind: s.kind, bytes };
      }),
    };
  }

  /**
   * Writes the file under `key` (what the caller checks on reading), through a
   * temporary name and a rename, so a reader never sees half a file. With `sync`
   * false its bytes may be in the page cache only when this resolves: the caller
   * makes them durable (syncFile) before it relies on the file after a crash.
   */
  async save(file: string, key: string, opts: { sync?: boolean } = {}): Promise<void> {
    const header = Buffer.from(JSON.stringify({ key, sections: this.sections } satisfies Header));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    // The sections start aligned: the prefix is padded to ALIGN.
    const prefix = MAGIC.length + 4 + header.length;
    const pad = Buffer.alloc((ALIGN - (prefix % ALIGN)) % ALIGN, 0x20);
    const dir = path.dirname(file);
    await fs.promises.mkdir(dir, { recursive: true });
    // A save cut off by a crash left its temporary file, as large as the snapshot: removed here.
    const tmp = temporaryFor(file);
    try {
      const handle = await fs.promises.open(tmp, 'w');
      try {
        const write = async (part: Buffer) => {
          // One write call takes at most 2 GiB.
          for (let at = 0; at < part.length; at += MAX_IO_BYTES)
            await handle.write(part.subarray(at, at + MAX_IO_BYTES));
        };
        for (const part of [MAGIC, length, header, pad]) await write(part);
        let written = 0;
        for (const [i, part] of this.parts.entries()) {
          const { at } = this.sections[i]!;
          // Each section starts aligned: zeros up to its offset.
          if (at > written) await write(Buffer.alloc(at - written));
          await write(part);
          written = at + part.length;
        }
        if (opts.sync !== false) await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(tmp, file);
    } catch (err) {
      // A save that failed (a full disk, say) must not leave a file as large as the snapshot behind.
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
  }
}

/**
 * A snapshot's sections read into shared memory, in order: what another thread needs to read it
 * again without a copy (SnapshotReader.fromShared). Plain data, so it can be posted to a worker.
 */
export interface SharedSnapshot {
  sections: { kind: Kind; bytes: SharedArrayBuffer }[];
}

export class SnapshotReader {
  private next = 0;
  /** Every section's bytes, once readAhead has read them. */
  private ahead: (ArrayBuffer | SharedArrayBuffer)[] | null = null;
  /** The sections read so far, when they are read into shared memory. */
  private readonly sharedOut: SharedSnapshot['sections'] | null;

  private constructor(
    private fd: number | null,
    private readonly base: number,
    private readonly sections: Section[],
    shared: boolean,
    /** Sections already in shared memory (fromShared): nothing is read from a file. */
    private readonly sharedIn: SharedSnapshot['sections'] | null = null,
  ) {
    this.sharedOut = shared && !sharedIn ? [] : null;
  }

  /** Reads a snapshot again from the sections another reader put in shared memory. */
  static fromShared(snapshot: SharedSnapshot): SnapshotReader {
    const sections = snapshot.sections.map((s) => ({ kind: s.kind, at: 0, bytes: s.bytes.byteLength }));
    return new SnapshotReader(null, 0, sections, true, snapshot.sections);
  }

  /** The sections read so far into shared memory (open with `shared`). */
  get shared(): SharedSnapshot | null {
    return this.sharedOut && { sections: [...this.sharedOut] };
  }

  /** The key `file` was saved under; null when it is missing or not a snapshot. */
  static keyOf(file: string): string | null {
    const fd = openIfThere(file);
    if (fd === null) return null;
    try {
      const key = readHeader(fd)?.header.key;
      return typeof key === 'string' ? key : null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Opens `file` if it holds a snapshot saved under `key`; null when it is
   * missing, of another key or not a snapshot at all. The caller reads every
   * section and then calls `close`.
   */
  static open(
    file: string,
    key: string,
    { shared = false }: { shared?: boolean } = {},
  ): SnapshotReader | null {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      return null;
    }
    let reader: SnapshotReader | null = null;
    try {
      reader = SnapshotReader.check(fd, key, shared);
      return reader;
    } finally {
      if (!reader) fs.closeSync(fd);
    }
  }

  private static check(fd: number, key: string, shared: boolean): SnapshotReader | null {
    const read = readHeader(fd);
    if (!read) return null;
    const { header, length, size } = read;
    if (header.key !== key || !Array.isArray(header.sections)) return null;
    const prefix = MAGIC.length + 4 + length;
    const base = prefix + ((ALIGN - (prefix % ALIGN)) % ALIGN);
    const last = header.sections[header.sections.length - 1];
    if (last && base + last.at + last.bytes > size) return null;
    return new SnapshotReader(fd, base, header.sections, shared);
  }

  /**
   * Reads every section into memory on Node's thread pool, before any is taken: a snapshot of some
   * hundreds of MB read section by section on the calling thread holds up a server's requests for
   * as long (the search index of 1M companies, 776 MB, took 0.8-2.8 s).
   */
  async readAhead(): Promise<void> {
    if (this.fd === null || this.sharedIn || this.next > 0)
      throw new Error('snapshot reader cannot read ahead now');
    const ahead: (ArrayBuffer | SharedArrayBuffer)[] = [];
    for (const s of this.sections) {
      const bytes = this.sharedOut ? new SharedArrayBuffer(s.bytes) : new ArrayBuffer(s.bytes);
      await readExactlyAsync(this.fd, new Uint8Array(bytes), s.bytes, this.base + s.at, 'snapshot');
      ahead.push(bytes);
    }
    this.ahead = ahead;
  }

  /** Releases the file; the arrays read stay valid. */
  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private take(kind: Kind): Section {
    const s = this.sections[this.next++];
    if (!s || s.kind !== kind)
      throw new Error(`snapshot section ${this.next - 1}: expected ${kind}, found ${s?.kind ?? 'none'}`);
    return s;
  }

  /** The section's bytes, in a buffer of their own (so typed views over it are aligned). */
  private read(kind: Kind): Buffer {
    const s = this.take(kind);
    if (this.sharedIn) return Buffer.from(this.sharedIn[this.next - 1]!.bytes);
    const ahead = this.ahead?.[this.next - 1];
    if (ahead) {
      if (this.sharedOut) this.sharedOut.push({ kind, bytes: ahead as SharedArrayBuffer });
      return Buffer.from(ahead);
    }
    if (this.fd === null) throw new Error('snapshot reader is closed');
    if (!this.sharedOut) return readAt(this.fd, this.base + s.at, s.bytes);
    const bytes = new SharedArrayBuffer(s.bytes);
    const buf = Buffer.from(bytes);
    readExactly(this.fd, buf, s.bytes, this.base + s.at, 'snapshot');
    this.sharedOut.push({ kind, bytes });
    return buf;
  }

  /** The next section, an array of `kind` (u8() and the rest name the kind in the call). */
  array<K extends ArrayKind>(kind: K): InstanceType<(typeof CTORS)[K]> {
    const b = this.read(kind);
    const Ctor = CTORS[kind];
    return new Ctor(b.buffer as ArrayBuffer, b.byteOffset, b.length / Ctor.BYTES_PER_ELEMENT) as InstanceType<
      (typeof CTORS)[K]
    >;
  }

  u8(): Uint8Array {
    return this.array('u8');
  }
  u16(): Uint16Array {
    return this.array('u16');
  }
  u32(): Uint32Array {
    return this.array('u32');
  }
  i32(): Int32Array {
    return this.array('i32');
  }

  bytes(): Buffer {
    return this.read('bytes');
  }

  json<T>(): T {
    return JSON.parse(this.read('json').toString('utf8')) as T;
  }

  /** Every section was read: the reader and the writer agreed on the layout. */
  get done(): boolean {
    return this.next === this.sections.length;
  }
}

/**
 * `length` bytes of the file from `position`, in a buffer not taken from the
 * shared pool (its offset is 0, so any typed array can view it).
 */
function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.allocUnsafeSlow(length);
  readExactly(fd, buf, length, position, 'snapshot');
  return buf;
}

/** The header of the snapshot in `fd`, its length and the file's size; null when it is not a snapshot. */
function readHeader(fd: number): { header: Header; length: number; size: number } | null {
  const size = fs.fstatSync(fd).size;
  if (size < MAGIC.length + 4) return null;
  const start = readAt(fd, 0, MAGIC.length + 4);
  if (!start.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const length = start.readUInt32LE(MAGIC.length);
  if (MAGIC.length + 4 + length > size) return null;
  let header: unknown;
  try {
    header = JSON.parse(readAt(fd, MAGIC.length + 4, length).toString('utf8'));
  } catch {
    return null;
  }
  return header !== null && typeof header === 'object' ? { header: header as Header, length, size } : null;
}

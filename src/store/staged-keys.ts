import fs from 'node:fs';
import path from 'node:path';
import { openIfThere, readExactly, writeFully } from './file-io';
import { hashOfBytes } from './string-hash';
import { eachLineOf } from './staging-file';
import { STAGING_DELIMITER, stagingFile } from './tables';
import type { TableName } from './tables';

/**
 * Where each line of a staging file is, by the hash of its key (its first field), written beside the
 * file as the import writes its lines (`<file>.keys`). The point-read file (point-file.ts) then
 * keeps the staging file itself, under a name of its own, as its rows of that kind: it neither reads
 * the lines back nor writes them again (at 1M companies the Edge lines are 2.2 GB, which took some
 * 20 s of the importing thread beside the store's load).
 */

/** First bytes of a keys file. */
const MAGIC = Buffer.from('tgkeys\0\0', 'latin1');
const VERSION = 1;
/** The magic, the version (32 bits), the line count (32 bits), the staging file's size (a double). */
const HEADER_BYTES = 24;
const TAB = STAGING_DELIMITER.charCodeAt(0);

/** The keys file of the staging file `file`. */
export function keysFileOf(file: string): string {
  return `${file}.keys`;
}

/** The keys file of a staging directory's table. */
export function stagedKeysFile(stagingDir: string, table: TableName): string {
  return keysFileOf(path.join(stagingDir, stagingFile(table)));
}

/** Lines by their key's hash (fnv1a), offset in the staging file and length without the line feed. */
export interface StagedKeys {
  count: number;
  hashes: Uint32Array<ArrayBuffer>;
  offsets: Float64Array<ArrayBuffer>;
  lengths: Uint32Array<ArrayBuffer>;
  /** The size of the staging file they were taken from. */
  bytes: number;
}

/** Lines by their key's hash, offset and length, in typed arrays that grow. */
export class LineEntries {
  hashes: Uint32Array<ArrayBuffer>;
  offsets: Float64Array<ArrayBuffer>;
  lengths: Uint32Array<ArrayBuffer>;
  count = 0;

  /**
   * @param capacity rows held before the arrays first grow: the count when it is known, so that
   *   they neither grow (old and new arrays held at once while they are copied) nor keep room unused.
   */
  constructor(capacity = 1024) {
    const n = Math.max(1, capacity);
    this.hashes = new Uint32Array(n);
    this.offsets = new Float64Array(n);
    this.lengths = new Uint32Array(n);
  }

  push(hash: number, offset: number, length: number): void {
    if (this.count === this.hashes.length) {
      const grow = <T extends Uint32Array | Float64Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.hashes = grow(this.hashes, (n) => new Uint32Array(n));
      this.offsets = grow(this.offsets, (n) => new Float64Array(n));
      this.lengths = grow(this.lengths, (n) => new Uint32Array(n));
    }
    this.hashes[this.count] = hash;
    this.offsets[this.count] = offset;
    this.lengths[this.count] = length;
    this.count++;
  }

  /**
   * A line at `offset`, `length` bytes without its line feed, that begins with `bytes[start, end)`:
   * its key is its first field, up to the first tab there or to `end`. A line whose key is empty is
   * passed over: nothing could ask for it.
   */
  addLine(bytes: Buffer, start: number, end: number, offset: number, length: number): void {
    let tab = bytes.indexOf(TAB, start);
    if (tab < 0 || tab > end) tab = end;
    if (tab > start) this.push(hashOfBytes(bytes, start, tab), offset, length);
  }

  /**
   * Every line of `bytes[start, end)`, whole lines each ending in a line feed but perhaps the last,
   * the first of them at offset `at`; answers the offset after them.
   */
  addLines(bytes: Buffer, start: number, end: number, at: number): number {
    const base = at - start;
    eachLineOf(bytes, start, end, (from, to) => this.addLine(bytes, from, to, base + from, to - from));
    return base + end;
  }
}

/** The keys of a staging file's lines, gathered as they are written, and then saved beside it. */
export class StagedKeysBuilder extends LineEntries {
  /**
   * @param at where the next line starts in the file (after its header, or whatever it holds
   *   already).
   */
  constructor(private at = 0) {
    super();
  }

  /**
   * The next line of the file: `length` bytes without its line feed, beginning with
   * `bytes[start, end)` (see addLine). A line with an empty key is passed over, though its bytes count.
   */
  line(bytes: Buffer, start: number, end: number, length: number): void {
    this.addLine(bytes, start, end, this.at, length);
    this.at += length + 1;
  }

  /** Writes the keys to `file` (through a temporary name, so that a reader never sees half of it). */
  save(file: string): void {
    const header = Buffer.alloc(HEADER_BYTES);
    MAGIC.copy(header);
    header.writeUInt32LE(VERSION, 8);
    header.writeUInt32LE(this.count, 12);
    header.writeDoubleLE(this.at, 16);
    const n = this.count;
    const parts = [header, ...[this.offsets, this.hashes, this.lengths].map((a) => bytesOf(a, n))];
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      for (const part of parts) writeFully(fd, part);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  }
}

/**
 * The keys saved in `file` for a staging file of `bytes` bytes; null when there is no such file, or it
 * was written for a file of another size (cut short or written again since), or is not whole.
 */
export function readStagedKeys(file: string, bytes: number): StagedKeys | null {
  const fd = openIfThere(file);
  if (fd === null) return null;
  try {
    const size = fs.fstatSync(fd).size;
    if (size < HEADER_BYTES) return null;
    const header = Buffer.alloc(HEADER_BYTES);
    readExactly(fd, header, HEADER_BYTES, 0, file);
    if (!header.subarray(0, 8).equals(MAGIC) || header.readUInt32LE(8) !== VERSION) return null;
    const count = header.readUInt32LE(12);
    if (header.readDoubleLE(16) !== bytes || size !== HEADER_BYTES + count * 16) return null;
    const offsets = new Float64Array(count);
    const hashes = new Uint32Array(count);
    const lengths = new Uint32Array(count);
    let at = HEADER_BYTES;
    for (const a of [offsets, hashes, lengths]) {
      const b = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
      readExactly(fd, b, b.length, at, file);
      at += b.length;
    }
    return { count, hashes, offsets, lengths, bytes };
  } finally {
    fs.closeSync(fd);
  }
}

function bytesOf(a: Uint32Array | Float64Array, n: number): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, n * a.BYTES_PER_ELEMENT);
}

/**
 * A streaming RFC 4180 reader that reports physical line numbers, and a chunked
 * file writer. Both are on the hot path of importing millions of rows, so the
 * reader splits plain lines natively and only walks characters for lines that
 * hold quotes.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { basename } from 'node:path';

/** Receives the records of a CSV file, in order. */
export interface CsvSink {
  /**
   * One record. `line` is the physical line (1-based) it starts on.
   * `suspect` is true when a field may hold a control character, a line break,
   * or a U+FFFD from invalid UTF-8; when false, no field does.
   */
  row(fields: string[], line: number, suspect: boolean): void;
  /** A record that is not valid CSV; the reader resumes at the next line. */
  error(line: number, reason: string): void;
}

/** A file that cannot be read as CSV at all. */
export class CsvFatalError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'CsvFatalError';
  }
}

/** Longest record accepted, in characters; guards against a stray quote swallowing the file. */
export const MAX_RECORD_CHARS = 1 << 20;

/** Why a line longer than MAX_RECORD_CHARS without quotes is rejected, whether read whole or in pieces. */
const tooLong = `line longer than ${MAX_RECORD_CHARS} characters; skipped`;
/** Why a record with quoted fields longer than MAX_RECORD_CHARS is rejected. */
const tooLongRecord = `record longer than ${MAX_RECORD_CHARS} characters; skipped`;
/**
 * How far a record with a quote may run before the reader gives up on finding its end (a quote never
 * closed, most likely). Above the record limit, so that whether a long record is rejected or stops
 * the import depends on the record alone, not on where the pieces of the file happen to end.
 */
export const MAX_OPEN_RECORD_CHARS = 4 * MAX_RECORD_CHARS;

const INCOMPLETE = -1;
const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;
/** Characters that make a chunk need per-field checks (LF and CR are handled separately). */
// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const SUSPECT_RE = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]/;

/**
 * Incremental CSV parser: feed decoded text with push(), then call end().
 * Blank lines are skipped; a leading byte order mark is dropped.
 */
export class CsvParser {
  private buf = '';
  private line = 1;
  private started = false;
  private done = false;
  /** An over-long line without quotes is being passed over, up to its line break. */
  private skipping = false;

  /**
   * `midFile`: the text starts at a record boundary inside a file (a range read), so its first
   * character is data even when it is a byte order mark, and lines count from 1 there.
   */
  constructor(
    private readonly sink: CsvSink,
    midFile = false,
  ) {
    this.started = midFile;
  }

  /**
   * Whether a line or record longer than MAX_RECORD_CHARS was met. How such a one is read depends on
   * where the pieces of text end (the limits are checked between pieces), so a reader that starts
   * inside a file may not read it as a reader from the start does.
   */
  sawLong = false;

  /** Whether everything pushed so far ended a record: no record, quoted or over-long, is open. */
  atRecordStart(): boolean {
    return this.buf === '' && !this.skipping;
  }

  /** The physical line the next record starts on. */
  get nextLine(): number {
    return this.line;
  }

  /** Feeds the next piece of text; records completed by it go to the sink. */
  push(text: string): void {
    if (this.done) throw new Error('CsvParser: push after end');
    if (this.skipping) {
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      this.skipping = false;
      this.line++;
      text = text.slice(nl + 1);
    }
    let s = this.buf.length > 0 ? this.buf + text : text;
    if (!this.started && s.length > 0) {
      this.started = true;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    const pos = this.parse(s, false);
    this.buf = pos >= s.length ? '' : s.slice(pos);
    if (this.buf.length > MAX_RECORD_CHARS) this.sawLong = true;
    if (this.buf.length > MAX_RECORD_CHARS && this.buf.indexOf('"') < 0) {
      // One line, too long to be a record, but with no quote to lose the reader's place: rejected, and
      // the reader goes on at the next line.
      this.sink.error(this.line, tooLong);
      this.buf = '';
      this.skipping = true;
    } else if (this.buf.length > MAX_OPEN_RECORD_CHARS) {
      throw new CsvFatalError(
        `record starting at line ${this.line} is still open after ${MAX_OPEN_RECORD_CHARS} characters (unbalanced quote?)`,
        this.line,
      );
    }
  }

  /** Flushes the last record (a file need not end with a line break). */
  end(): void {
    if (this.done) return;
    this.done = true;
    if (this.skipping) return;
    const s = this.buf;
    this.buf = '';
    if (s.length > 0) this.parse(s, true);
  }

  /** Parses complete records of s from 0; returns where the unconsumed rest starts. */
  private parse(s: string, final: boolean): number {
    const len = s.length;
    const sink = this.sink;
    const suspectChunk = SUSPECT_RE.test(s);
    const hasCr = s.indexOf('\r') >= 0;
    let pos = 0;
    let q = -1;
    while (pos < len) {
      let nl = s.indexOf('\n', pos);
      if (nl < 0) {
        if (!final) break;
        nl = len;
      }
      if (q < pos) {
        q = s.indexOf('"', pos);
        if (q < 0) q = len + 1;
      }
      if (q > nl) {
        let end = nl;
        if (end > pos && s.charCodeAt(end - 1) === CR) end--;
        const lineNo = this.line++;
        if (end - pos > MAX_RECORD_CHARS) {
          this.sawLong = true;
          this.sink.error(lineNo, tooLong);
        } else if (end > pos) {
          const text = s.slice(pos, end);
          const suspect = suspectChunk || (hasCr && text.indexOf('\r') >= 0);
          sink.row(text.split(','), lineNo, suspect);
        }
        pos = nl + 1;
        continue;
      }
      const next = this.parseQuoted(s, pos, final, suspectChunk || hasCr);
      if (next === INCOMPLETE) break;
      pos = next;
    }
    return pos;
  }

  /**
   * Character-level parse of one record that contains a quote, from pos.
   * Returns the position after the record, or INCOMPLETE when more text is needed.
   */
  private parseQuoted(s: string, pos: number, final: boolean, suspectChunk: boolean): number {
    const len = s.length;
    const fields: string[] = [];
    let suspect = suspectChunk;
    let breaks = 0;
    let i = pos;
    for (;;) {
      if (i < len && s.charCodeAt(i) === QUOTE) {
        let j = i + 1;
        let val = '';
        for (;;) {
          const k = s.indexOf('"', j);
          if (k < 0) {
            if (!final) return INCOMPLETE;
            // A quote left open on the last line costs that row; one that swallowed the lines after it
            // would hide them as one rejected row, so it stops the import as an over-long record does.
            // Line breaks at the very end (blank lines below the last) are no lines lost.
            let end = len;
            while (end > i && (s.charCodeAt(end - 1) === LF || s.charCodeAt(end - 1) === CR)) end--;
            const swallowed = countBreaks(s, i, end);
            if (swallowed > 0) {
              const line = this.line + countBreaks(s, pos, i);
              throw new CsvFatalError(
                `the quote opened on line ${line} is never closed, so the ${swallowed} line${swallowed === 1 ? '' : 's'} after it cannot be read as records`,
                line,
              );
            }
            return this.fail(len, breaks + countBreaks(s, i, len), 'unterminated quoted field', false);
          }
          if (k + 1 >= len && !final) return INCOMPLETE;
          if (s.charCodeAt(k + 1) === QUOTE) {
            val += s.slice(j, k + 1);
            j = k + 2;
            continue;
          }
          val += s.slice(j, k);
          i = k + 1;
          break;
        }
        const b = countBreaks(val, 0, val.length);
        if (b > 0 || val.indexOf('\r') >= 0) {
          suspect = true;
          breaks += b;
        }
        fields.push(val);
        if (i >= len) return this.emit(fields, breaks, suspect, len, false);
        const c = s.charCodeAt(i);
        if (c === COMMA) {
          i++;
          continue;
        }
        if (c === LF) return this.emit(fields, breaks, suspect, i + 1, true);
        if (c === CR) {
          if (i + 1 >= len && !final) return INCOMPLETE;
          if (i + 1 >= len) return this.emit(fields, breaks, suspect, len, false);
          if (s.charCodeAt(i + 1) === LF) return this.emit(fields, breaks, suspect, i + 2, true);
        }
        return this.skipLine(s, i, final, breaks, 'unexpected character after a closing quote');
      }
      let k = i;
      let c = -1;
      while (k < len) {
        c = s.charCodeAt(k);
        if (c === COMMA || c === LF) break;
        if (c === QUOTE) return this.skipLine(s, k, final, breaks, 'quote inside an unquoted field');
        k++;
      }
      if (k >= len && !final) return INCOMPLETE;
      if (k >= len) {
        fields.push(s.slice(i, k));
        return this.emit(fields, breaks, suspect, len, false);
      }
      if (c === COMMA) {
        fields.push(s.slice(i, k));
        i = k + 1;
        continue;
      }
      const end = k > i && s.charCodeAt(k - 1) === CR ? k - 1 : k;
      fields.push(s.slice(i, end));
      return this.emit(fields, breaks, suspect, k + 1, true);
    }
  }

  private emit(fields: string[], breaks: number, suspect: boolean, next: number, newline: boolean): number {
    // The record's characters, its separators included, as a line without quotes is measured.
    let chars = fields.length - 1;
    for (const f of fields) chars += f.length;
    if (chars > MAX_RECORD_CHARS) {
      this.sawLong = true;
      return this.fail(next, breaks, tooLongRecord, newline);
    }
    const lineNo = this.line;
    this.line += breaks + (newline ? 1 : 0);
    this.sink.row(fields, lineNo, suspect);
    return next;
  }

  /** Reports a malformed record and resumes after the end of the physical line holding position at. */
  private skipLine(s: string, at: number, final: boolean, breaks: number, reason: string): number {
    const nl = s.indexOf('\n', at);
    if (nl < 0 && !final) return INCOMPLETE;
    const next = nl < 0 ? s.length : nl + 1;
    return this.fail(next, breaks, reason, nl >= 0);
  }

  private fail(next: number, breaks: number, reason: string, newline: boolean): number {
    const lineNo = this.line;
    this.line += breaks + (newline ? 1 : 0);
    this.sink.error(lineNo, reason);
    return next;
  }
}

function countBreaks(s: string, from: number, to: number): number {
  let n = 0;
  let i = s.indexOf('\n', from);
  while (i >= 0 && i < to) {
    n++;
    i = s.indexOf('\n', i + 1);
  }
  return n;
}

/** Progress of reading one file. */
export interface ReadProgress {
  bytesRead: number;
  totalBytes: number;
}

/**
 * Bytes read at a time. Small enough that the decoded text is an ordinary
 * young-generation string: multi-megabyte chunks go straight to the old
 * generation, and hundreds of them per file force a full collection every
 * fraction of a second once the importer's heap is large.
 */
const READ_CHUNK_BYTES = 1 << 16;

/**
 * Reads a UTF-8 CSV file (optional BOM) record by record. `afterChunk` runs
 * after each chunk's records, which lets the caller flush writers and report
 * progress with backpressure.
 */
export async function readCsvFile(
  path: string,
  sink: CsvSink,
  afterChunk?: (p: ReadProgress) => Promise<void> | void,
  range: CsvRange = {},
): Promise<CsvRangeEnd> {
  const totalBytes = (await stat(path)).size;
  const start = range.start ?? 0;
  const parser = new CsvParser(sink, start > 0);
  const decoder = new StringDecoder('utf8');
  let bytesRead = start;
  const stream = createReadStream(path, {
    highWaterMark: READ_CHUNK_BYTES,
    start,
    end: range.end === undefined ? undefined : range.end - 1,
  });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytesRead += chunk.length;
      parser.push(decoder.write(chunk));
      if (afterChunk) await afterChunk({ bytesRead, totalBytes });
    }
    // A range that stops inside the file is not the file's end: an open record there stays open.
    if (range.end === undefined || range.end >= totalBytes) {
      const tail = decoder.end();
      if (tail.length > 0) parser.push(tail);
      parser.end();
    }
  } catch (e) {
    // The parser knows the line, not the file: an import reads several.
    if (e instanceof CsvFatalError) throw new CsvFatalError(`${basename(path)}: ${e.message}`, e.line);
    throw e;
  }
  if (afterChunk) await afterChunk({ bytesRead, totalBytes });
  return { atRecordStart: parser.atRecordStart(), nextLine: parser.nextLine, sawLong: parser.sawLong };
}

/**
 * Part of a file to read, in bytes: [start, end). A range that starts inside the file must start
 * on a record boundary; its lines are then numbered from 1 there.
 */
export interface CsvRange {
  start?: number;
  end?: number;
}

/** Where a read stopped: whether on a record boundary, and the physical line that follows. */
export interface CsvRangeEnd {
  atRecordStart: boolean;
  nextLine: number;
  /** CsvParser.sawLong. */
  sawLong: boolean;
}

/** Parses a whole CSV text held in memory (tests, small inputs). */
export function parseCsvText(text: string, sink: CsvSink): void {
  const parser = new CsvParser(sink);
  parser.push(text);
  parser.end();
}

/** Default size of the buffers a writer encodes rows into. */
const CHUNK_BYTES = 1 << 20;
/** Text gathered before it is encoded, by default. */
const SMALL_CHARS = 1 << 13;

export interface ChunkWriterOptions {
  /**
   * Size of the write buffers (default 1 MiB). Many writers open at once want
   * smaller ones, which would otherwise add up.
   */
  chunkBytes?: number;
  /**
   * Characters of text gathered before they are encoded (default 8192). Many
   * writers open at once want 0: text waiting in many batches outlives
   * young-generation garbage collections and is then costly to collect.
   */
  batchChars?: number;
  /** Append to an existing file instead of truncating it. */
  append?: boolean;
}

interface Filled {
  buf: Buffer;
  len: number;
}

/**
 * Appends text to a file in large chunks. write() encodes into a reusable
 * 1 MiB buffer right away, so row strings die young and never pile up on the
 * heap; full buffers wait until flush(), which keeps one write in flight while
 * the caller goes on producing. Callers that await flush() whenever `full` is
 * true keep memory bounded.
 */
export class ChunkWriter {
  private cur: Buffer;
  private len = 0;
  private small = '';
  private queue: Filled[] = [];
  private readonly free: Buffer[] = [];
  private inflight: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    private readonly chunkBytes: number,
    private readonly batchChars: number,
  ) {
    this.cur = Buffer.allocUnsafe(chunkBytes);
  }

  /** Creates (or truncates, or with `append` appends to) the file. */
  static async create(path: string, opts: ChunkWriterOptions = {}): Promise<ChunkWriter> {
    return new ChunkWriter(
      await open(path, opts.append === true ? 'a' : 'w'),
      path,
      opts.chunkBytes ?? CHUNK_BYTES,
      opts.batchChars ?? SMALL_CHARS,
    );
  }

  /** Buffers text; it is encoded in batches of a few kilobytes, which amortises the encoder call. */
  write(text: string): void {
    this.small += text;
    if (this.small.length >= this.batchChars) this.encode();
  }

  private encode(): void {
    const text = this.small;
    this.small = '';
    const worst = text.length * 3;
    if (this.len + worst > this.chunkBytes) {
      this.rotate();
      if (worst > this.chunkBytes) {
        const b = Buffer.from(text, 'utf8');
        this.queue.push({ buf: b, len: b.length });
        return;
      }
    }
    this.len += this.cur.write(text, this.len, 'utf8');
  }

  /** Appends raw bytes (already UTF-8), after any text written before. */
  writeBytes(src: Buffer, start: number, end: number): void {
    if (this.small.length > 0) this.encode();
    const n = end - start;
    if (this.len + n > this.chunkBytes) {
      this.rotate();
      if (n > this.chunkBytes) {
        this.queue.push({ buf: Buffer.from(src.subarray(start, end)), len: n });
        return;
      }
    }
    src.copy(this.cur, this.len, start, end);
    this.len += n;
  }

  /** True when a buffer is full and the caller should await flush(). */
  get full(): boolean {
    return this.queue.length > 0;
  }

  private rotate(): void {
    if (this.small.length > 0) this.encode();
    if (this.len === 0) return;
    this.queue.push({ buf: this.cur, len: this.len });
    this.cur = this.free.pop() ?? Buffer.allocUnsafe(this.chunkBytes);
    this.len = 0;
  }

  /** Starts writing the full buffers (with force, also the partly filled one). */
  async flush(force = false): Promise<void> {
    if (force) this.rotate();
    if (this.queue.length === 0) return;
    if (this.inflight) await this.inflight;
    const batch = this.queue;
    this.queue = [];
    this.inflight = this.writeAll(batch);
  }

  private async writeAll(batch: Filled[]): Promise<void> {
    for (const { buf, len } of batch) {
      let off = 0;
      while (off < len) {
        const { bytesWritten } = await this.fh.write(buf, off, len - off);
        off += bytesWritten;
      }
      if (buf.length === this.chunkBytes && this.free.length < 4) this.free.push(buf);
    }
  }

  /** Writes everything buffered and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush(true);
      if (this.inflight) await this.inflight;
    } finally {
      this.closed = true;
      await this.fh.close();
    }
  }

  /** Closes the file without writing what is still buffered. */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.len = 0;
    this.small = '';
    try {
      if (this.inflight) await this.inflight;
    } finally {
      await this.fh.close();
    }
  }
}

/**
 * Text gathered as UTF-8 in one growable buffer, to be handed over whole: to
 * a worker thread, say, which can take the buffer without a copy. Many short
 * strings held until then would instead outlive young-generation garbage
 * collections and be costly to collect.
 */
export class TextBuffer {
  private buf: Buffer;
  private len = 0;
  private small = '';

  constructor(private readonly initialBytes = 1 << 20) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  write(text: string): void {
    this.small += text;
    if (this.small.length >= SMALL_CHARS) this.encode();
  }

  /** Appends raw bytes (already UTF-8), after any text written before. */
  writeBytes(src: Buffer, start: number, end: number): void {
    if (this.small.length > 0) this.encode();
    this.reserve(end - start);
    src.copy(this.buf, this.len, start, end);
    this.len += end - start;
  }

  /** Bytes written so far, about (text of the last few kilobytes is counted by its characters). */
  get size(): number {
    return this.len + this.small.length;
  }

  private encode(): void {
    const text = this.small;
    this.small = '';
    this.reserve(text.length * 3);
    this.len += this.buf.write(text, this.len, 'utf8');
  }

  private reserve(bytes: number): void {
    if (this.len + bytes > this.buf.length) {
      const b = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + bytes));
      this.buf.copy(b, 0, 0, this.len);
      this.buf = b;
    }
  }

  /**
   * Everything written so far, in a buffer of its own (not from the pool, so
   * that it can be transferred); this TextBuffer starts afresh.
   */
  take(): Buffer {
    if (this.small.length > 0) this.encode();
    const out = this.buf.subarray(0, this.len);
    this.buf = Buffer.allocUnsafeSlow(Math.max(this.initialBytes, this.len));
    this.len = 0;
    return out;
  }
}

const SEGMENT_BYTES = 1 << 24;

/**
 * Append-only store of many short texts as UTF-8 outside the JS heap: keeping
 * a million company rows as strings would cost several times their size in
 * string headers and garbage-collector work.
 */
export class ByteStore {
  private readonly segments: Buffer[] = [];
  private cur: Buffer = Buffer.allocUnsafe(SEGMENT_BYTES);
  private len = 0;
  private seg = new Int32Array(1024);
  private off = new Int32Array(1024);
  private end = new Int32Array(1024);
  private n = 0;

  /** Number of texts stored. */
  get size(): number {
    return this.n;
  }

  /** Stores text; returns its number. */
  push(text: string): number {
    if (this.n === this.seg.length) {
      this.seg = grow(this.seg);
      this.off = grow(this.off);
      this.end = grow(this.end);
    }
    if (this.len + text.length * 3 > this.cur.length) {
      this.segments.push(this.cur);
      this.cur = Buffer.allocUnsafe(Math.max(SEGMENT_BYTES, text.length * 3));
      this.len = 0;
    }
    const start = this.len;
    this.len += this.cur.write(text, start, 'utf8');
    this.seg[this.n] = this.segments.length;
    this.off[this.n] = start;
    this.end[this.n] = this.len;
    return this.n++;
  }

  /** Text number i. */
  text(i: number): string {
    const s = this.seg[i] as number;
    const buf = s === this.segments.length ? this.cur : (this.segments[s] as Buffer);
    return buf.toString('utf8', this.off[i], this.end[i]);
  }

  /** Appends text number i to a writer. */
  writeTo(w: Pick<ChunkWriter, 'writeBytes'>, i: number): void {
    const s = this.seg[i] as number;
    const buf = s === this.segments.length ? this.cur : (this.segments[s] as Buffer);
    w.writeBytes(buf, this.off[i] as number, this.end[i] as number);
  }
}

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

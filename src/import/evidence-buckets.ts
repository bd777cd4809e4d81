/**
 * Evidence buckets. Evidence travels as JSON on its Edge row, but Edge rows
 * are written only once every input file is read, and evidence.csv need not
 * be grouped by edge. Holding ten million items in memory is not an option,
 * so each accepted item is appended, as finished JSON, to a temporary bucket
 * file chosen by its edge's number; the Edge rows are then written one bucket
 * (a range of edges) at a time, each edge's items sorted.
 *
 * The importing thread, which reads and checks the files, writes each item's
 * bucket line (its JSON included) once. Routing the lines to their buckets
 * and writing the Edge rows, a large share of an import's work, moves bytes
 * only; it runs in a worker thread (evidence-worker.ts) when the compiled
 * worker script is present, otherwise in the importing thread. Either way the
 * importing thread talks to an EvidenceSink, and the work is done by a
 * BucketStore.
 */
import { open, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessagePort, Transferable } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import { StagedKeysBuilder, keysFileOf } from '../store/staged-keys';
import { encodeJson } from '../store/tables';
import { ChunkWriter } from './csv';
import { DAY_MS, isoOf } from './format';

/** Temporary file of bucket b in a staging directory; the loader never reads it (not a stagingFile name). */
export function bucketFile(b: number): string {
  return `_evidence-${b}.tmp`;
}

/** Edges per bucket (about twice as many evidence items), within 1 to MAX_BUCKETS buckets. */
const EDGES_PER_BUCKET = 50000;
const MAX_BUCKETS = 256;
/** Buffer size of a bucket writer: up to MAX_BUCKETS of them are open at once. */
const BUCKET_CHUNK_BYTES = 1 << 18;

/** Number of buckets for nEdges edges. */
export function bucketCount(nEdges: number): number {
  return Math.min(MAX_BUCKETS, Math.max(1, Math.ceil(nEdges / EDGES_PER_BUCKET)));
}

/** Bucket of edge e: floor(e * nBuckets / nEdges), exact in doubles for any realistic size. */
export function bucketOf(e: number, nBuckets: number, nEdges: number): number {
  return Math.floor((e * nBuckets) / nEdges);
}

/** First edge of bucket b (for b = nBuckets: nEdges), the smallest e with bucketOf(e) >= b. */
export function bucketStart(b: number, nBuckets: number, nEdges: number): number {
  return Math.ceil((b * nEdges) / nBuckets);
}

/** What JSON.stringify escapes in a string: quote, backslash, control characters, surrogates. */
// eslint-disable-next-line no-control-regex -- control characters are among what it escapes
const JSON_ESCAPED_RE = /["\\\u0000-\u001f\ud800-\udfff]/;

/*
 * JSON values are assembled by hand: JSON.stringify on an object per item
 * would cost seconds over ten million items. Strings that need any escaping go
 * through encodeJson, so the text is exactly what encodeJson gives for the
 * whole value.
 */

/** A JSON string. */
export function jsonString(s: string): string {
  return JSON_ESCAPED_RE.test(s) ? encodeJson(s) : `"${s}"`;
}

/** A JSON string, or null for a blank value. */
export function jsonText(s: string): string {
  return s === '' ? 'null' : jsonString(s);
}

const TAB = 9;
const LF = 10;
const QUOTE = 34;
const COMMA = 44;
const BACKSLASH = 92;

/**
 * Accepted evidence items as the importing thread hands them over: bucket
 * lines as UTF-8 (edge, date, id, then the item's JSON led by a comma; see
 * BucketStore), so that the store only routes bytes. The item's JSON is an
 * array in the order of EVIDENCE_FIELDS (src/store/tables.ts): naming every
 * field in every item would double the size of the Edge table, and its bulk
 * load with it.
 *
 * Ten million items pass here in a large import, on the thread that reads
 * every file, so the lines are written byte by byte: a string per line, and
 * its encoding, cost that thread several seconds. Text that is not plain ASCII
 * or that JSON must escape takes the slower way through jsonString, so the
 * bytes are exactly the UTF-8 of the strings the JSON helpers above give.
 */
export class EvidenceLines {
  private buf: Buffer;
  private len = 0;

  constructor(private readonly initialBytes = 1 << 17) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Bytes written so far. */
  get size(): number {
    return this.len;
  }

  /**
   * Appends one item. Dates are epoch milliseconds (NaN for none, except `date`); ids, codes
   * (`type`, `status`, `byCustomer`) are validated ASCII without tabs; blanks are empty strings.
   */
  add(
    edge: number,
    date: number,
    id: string,
    type: string,
    url: string,
    domain: string,
    status: string,
    byCustomer: string,
    metadata: string,
    finalisedOn: number,
    createdOn: number,
    lastModifiedOn: number,
  ): void {
    // Worst case: every character escaped as \uXXXX; four dates, the edge and punctuation.
    const worst =
      256 +
      6 *
        (2 * id.length +
          type.length +
          url.length +
          domain.length +
          status.length +
          byCustomer.length +
          metadata.length);
    if (this.len + worst > this.buf.length) this.grow(worst);
    const buf = this.buf;
    let p = digitsAt(buf, this.len, edge);
    buf[p++] = TAB;
    const day = isoOf(date);
    p = asciiAt(buf, p, day, day.length);
    buf[p++] = TAB;
    p = asciiAt(buf, p, id, id.length);
    buf[p++] = TAB;
    buf[p++] = COMMA;
    buf[p++] = 91; // [
    p = quotedAt(buf, p, id);
    buf[p++] = COMMA;
    p = isoDateAt(buf, p, date, day);
    buf[p++] = COMMA;
    p = type === '' ? nullAt(buf, p) : quotedAt(buf, p, type);
    buf[p++] = COMMA;
    p = url === '' ? nullAt(buf, p) : quotedAt(buf, p, url);
    buf[p++] = COMMA;
    p = domain === '' ? nullAt(buf, p) : quotedAt(buf, p, domain);
    buf[p++] = COMMA;
    p = status === '' ? nullAt(buf, p) : asciiAt(buf, p, status, status.length);
    buf[p++] = COMMA;
    p = byCustomer === '' ? nullAt(buf, p) : asciiAt(buf, p, byCustomer, byCustomer.length);
    buf[p++] = COMMA;
    p = metadata === '' ? nullAt(buf, p) : quotedAt(buf, p, metadata);
    buf[p++] = COMMA;
    p = dateAt(buf, p, finalisedOn);
    buf[p++] = COMMA;
    p = dateAt(buf, p, createdOn);
    buf[p++] = COMMA;
    p = dateAt(buf, p, lastModifiedOn);
    buf[p++] = 93; // ]
    buf[p++] = LF;
    this.len = p;
  }

  /** Everything written so far, in a buffer of its own (not from the pool, so that it can be transferred). */
  take(): Buffer {
    const out = this.buf.subarray(0, this.len);
    this.buf = Buffer.allocUnsafeSlow(Math.max(this.initialBytes, this.len));
    this.len = 0;
    return out;
  }

  private grow(bytes: number): void {
    const b = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + bytes));
    this.buf.copy(b, 0, 0, this.len);
    this.buf = b;
  }
}

/*
 * The writers below put a value into buf at p, which has room for it, and return where it ends.
 */

function nullAt(buf: Buffer, p: number): number {
  buf[p] = 110; // n
  buf[p + 1] = 117; // u
  buf[p + 2] = 108; // l
  buf[p + 3] = 108; // l
  return p + 4;
}

/** A non-negative integer in decimal. */
function digitsAt(buf: Buffer, p: number, n: number): number {
  let end = p + 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) end++;
  let q = end;
  let x = n;
  do {
    buf[--q] = 48 + (x % 10);
    x = Math.floor(x / 10);
  } while (x > 0);
  return end;
}

/** The first n characters of s, ASCII as the caller promises; anything else is encoded as UTF-8. */
function asciiAt(buf: Buffer, p: number, s: string, n: number): number {
  let q = p;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return p + buf.write(s.slice(0, n), p, 'utf8');
    buf[q++] = c;
  }
  return q;
}

/** s as a JSON string: quoted as it is when nothing in it needs escaping, else as jsonString gives it. */
function quotedAt(buf: Buffer, p: number, s: string): number {
  let q = p;
  buf[q++] = QUOTE;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === QUOTE || c === BACKSLASH)
      return p + buf.write(jsonString(s), p, 'utf8');
    buf[q++] = c;
  }
  buf[q++] = QUOTE;
  return q;
}

/**
 * A date as a JSON string, without its time when that is midnight UTC (most are); null for none.
 * Staged dates are whole milliseconds within DATE_RANGE (format.ts), so isoOf gives 20 characters
 * for a whole second, and a midnight is a multiple of a day.
 */
function dateAt(buf: Buffer, p: number, ms: number): number {
  return Number.isNaN(ms) ? nullAt(buf, p) : isoDateAt(buf, p, ms, isoOf(ms));
}

/** dateAt for a date whose ISO text `s` (isoOf(ms)) the caller already has. */
function isoDateAt(buf: Buffer, p: number, ms: number, s: string): number {
  buf[p] = QUOTE;
  const q = asciiAt(buf, p + 1, s, ms % DAY_MS === 0 && s.length === 20 ? 10 : s.length);
  buf[q] = QUOTE;
  return q + 1;
}

const Z = 90;
/** Length of `YYYY-MM-DDThh:mm:ss`, the part of a staged date before its fraction or zone. */
const SECONDS_LEN = 19;
/** Rows written between two checks for a full writer. */
const BATCH = 4096;

/** Reads a file into `into` when it fits (else a new buffer); returns the buffer and the length read. */
async function readWhole(path: string, into: Buffer | null): Promise<{ buf: Buffer; len: number }> {
  const fh: FileHandle = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const buf = into !== null && into.length >= size ? into : Buffer.allocUnsafe(Math.ceil(size * 1.25));
    let len = 0;
    while (len < size) {
      const { bytesRead } = await fh.read(buf, len, size - len, len);
      if (bytesRead === 0) break;
      len += bytesRead;
    }
    return { buf, len };
  } finally {
    await fh.close();
  }
}

/** Per-item arrays for one bucket, kept for the next: allocating them per bucket sets off full collections. */
class Scratch {
  start = new Int32Array(0);
  order = new Int32Array(0);
  /** Each item's edge, relative to the bucket's first. */
  edge = new Int32Array(0);
  /** Byte range of each item's JSON (which starts with a comma), of its date and of its id. */
  from = new Int32Array(0);
  to = new Int32Array(0);
  date = new Int32Array(0);
  dateEnd = new Int32Array(0);
  id = new Int32Array(0);
  idEnd = new Int32Array(0);

  ensure(edges: number, items: number): void {
    if (this.start.length < edges + 1) this.start = new Int32Array(Math.ceil((edges + 1) * 1.25));
    if (this.order.length >= items) return;
    const cap = Math.ceil(items * 1.25);
    this.order = new Int32Array(cap);
    this.edge = new Int32Array(cap);
    this.from = new Int32Array(cap);
    this.to = new Int32Array(cap);
    this.date = new Int32Array(cap);
    this.dateEnd = new Int32Array(cap);
    this.id = new Int32Array(cap);
    this.idEnd = new Int32Array(cap);
  }
}

/**
 * The bucket files of one import: turns evidence records into bucket lines
 * (edge, date, id, then the item's JSON led by a comma), and buckets into
 * Edge rows.
 */
export class BucketStore {
  private writers: ChunkWriter[] = [];
  private readonly scratch = new Scratch();
  /** The next bucket, read ahead while the current one is written out; and a buffer to read into. */
  private ahead: Promise<{ buf: Buffer; len: number }> | null = null;
  private spare: Buffer | null = null;
  /** The Edge staging file once its rows are written (see startEdges), and the keys of its lines. */
  private edges: { w: ChunkWriter; keys: StagedKeysBuilder; keysFile: string } | null = null;

  constructor(
    private readonly dir: string,
    private readonly nBuckets: number,
    private readonly nEdges: number,
  ) {}

  /** Creates (or truncates) the bucket files. */
  async open(): Promise<void> {
    for (let b = 0; b < this.nBuckets; b++) {
      this.writers.push(
        await ChunkWriter.create(join(this.dir, bucketFile(b)), {
          chunkBytes: BUCKET_CHUNK_BYTES,
          batchChars: 0,
        }),
      );
    }
  }

  /** Appends evidence records (bucket lines as EvidenceLines writes them) to their buckets. */
  async add(records: Buffer): Promise<void> {
    const { writers, nBuckets, nEdges } = this;
    const n = records.length;
    let p = 0;
    while (p < n) {
      let q = p;
      let c = records[q] as number;
      let e = 0;
      while (c !== TAB && q < n) {
        e = e * 10 + c - 48;
        c = records[++q] as number;
      }
      const nl = records.indexOf(LF, q);
      if (q === p || nl < 0) throw new Error('evidence record without its edge or its line end');
      (writers[bucketOf(e, nBuckets, nEdges)] as ChunkWriter).writeBytes(records, p, nl + 1);
      p = nl + 1;
    }
    for (const w of writers) if (w.full) await w.flush();
  }

  /** Empties every bucket (for a second pass over the evidence). */
  async reset(): Promise<void> {
    await this.abandon();
    await this.open();
  }

  /** Writes out and closes the bucket files: no more records come. */
  async seal(): Promise<void> {
    for (const w of this.writers) await w.close();
    this.writers = [];
  }

  /** Closes the bucket files without writing what is buffered. */
  async abandon(): Promise<void> {
    for (const w of this.writers) await w.abandon().catch(() => undefined);
    this.writers = [];
  }

  private read(b: number): Promise<{ buf: Buffer; len: number }> {
    const r = readWhole(join(this.dir, bucketFile(b)), this.spare);
    this.spare = null;
    // Should writing fail, a read in flight must not become an unhandled rejection.
    r.catch(() => undefined);
    return r;
  }

  /**
   * The Edge rows go to the end of the staging file `path` (its header written), and the keys of
   * its lines beside it once they are all written (see staged-keys.ts).
   */
  async startEdges(path: string): Promise<void> {
    const at = (await stat(path)).size;
    this.edges = {
      w: await ChunkWriter.create(path, { append: true }),
      keys: new StagedKeysBuilder(at),
      keysFile: keysFileOf(path),
    };
  }

  /** Writes out and closes the Edge staging file, then saves the keys of its lines. */
  async finishEdges(): Promise<void> {
    if (!this.edges) return;
    const { w, keys, keysFile } = this.edges;
    this.edges = null;
    await w.close();
    keys.save(keysFile);
  }

  /** Closes the Edge staging file without writing what is buffered. */
  async abandonEdges(): Promise<void> {
    const edges = this.edges;
    this.edges = null;
    await edges?.w.abandon();
  }

  /**
   * Appends to the Edge staging file the Edge rows of bucket b, its edges [lo, hi): each row is its
   * prefix (the columns before `evidences`, the key first; `prefixes` holds one line per edge, as
   * UTF-8) and the edge's evidence, newest date first, then by id. Each line's key is noted with
   * where the line is. Then removes the bucket file. Buckets must come in order.
   */
  async writeEdges(b: number, lo: number, hi: number, prefixes: Buffer): Promise<void> {
    if (!this.edges) throw new Error('Edge rows before startEdges');
    const { w, keys } = this.edges;
    const text = await (this.ahead ?? this.read(b));
    this.ahead = b + 1 < this.nBuckets ? this.read(b + 1) : null;
    const edges = hi - lo;
    this.group(text.buf, text.len, lo, edges);
    const { buf } = text;
    const { start, order, from, to } = this.scratch;
    let q = 0;
    for (let k = 0; k < edges; k++) {
      const nl = prefixes.indexOf(LF, q);
      if (nl < 0) throw new Error(`Edge row prefixes of edges from ${lo} end at edge ${lo + k}`);
      w.writeBytes(prefixes, q, nl);
      const a = start[k] as number;
      const z = start[k + 1] as number;
      // The line's bytes: its prefix, then `\t[]` or `\t[` and its items and `]` (all ASCII).
      let length = nl - q + 3;
      if (a === z) {
        w.write('\t[]\n');
      } else {
        w.write('\t[');
        for (let j = a; j < z; j++) {
          const i = order[j] as number;
          // Each item starts with a separating comma; the first one's is skipped.
          const itemFrom = (from[i] as number) + (j === a ? 1 : 0);
          w.writeBytes(buf, itemFrom, to[i] as number);
          length += (to[i] as number) - itemFrom;
        }
        w.write(']\n');
      }
      keys.line(prefixes, q, nl, length);
      q = nl + 1;
      if (k % BATCH === BATCH - 1 && w.full) await w.flush();
    }
    if (w.full) await w.flush();
    this.spare = buf;
    await rm(join(this.dir, bucketFile(b)), { force: true });
  }

  /** Groups the lines of a bucket by edge (counting sort), then sorts each edge's items. */
  private group(buf: Buffer, len: number, lo: number, edges: number): void {
    let items = 0;
    for (let p = buf.indexOf(LF, 0); p >= 0 && p < len; p = buf.indexOf(LF, p + 1)) items++;
    const s = this.scratch;
    s.ensure(edges, items);
    const { start, order, edge, from, to, date, dateEnd, id, idEnd } = s;
    start.fill(0, 0, edges + 1);
    let p = 0;
    for (let i = 0; i < items; i++) {
      let c = buf[p++] as number;
      let e = 0;
      while (c !== TAB) {
        e = e * 10 + c - 48;
        c = buf[p++] as number;
      }
      const k = e - lo;
      if (!(k >= 0 && k < edges)) throw new Error(`evidence bucket of edges from ${lo} holds edge ${e}`);
      edge[i] = k;
      start[k + 1] = (start[k + 1] as number) + 1;
      date[i] = p;
      p = buf.indexOf(TAB, p);
      dateEnd[i] = p;
      id[i] = p + 1;
      p = buf.indexOf(TAB, p + 1);
      idEnd[i] = p;
      from[i] = p + 1;
      p = buf.indexOf(LF, p);
      to[i] = p;
      p++;
    }
    for (let k = 0; k < edges; k++) start[k + 1] = (start[k + 1] as number) + (start[k] as number);
    const next = start.slice(0, edges);
    for (let i = 0; i < items; i++) {
      const k = edge[i] as number;
      order[next[k] as number] = i;
      next[k] = (next[k] as number) + 1;
    }
    BucketStore.sortItems(buf, s, edges);
  }

  /** Sorts each edge's items newest date first, then by id (ids are ASCII, so bytes order as strings). */
  private static sortItems(buf: Buffer, s: Scratch, edges: number): void {
    const { start, order, date, dateEnd, id, idEnd } = s;
    const before = (x: number, y: number): boolean => {
      const dx = date[x] as number;
      const dy = date[y] as number;
      // Staged dates order as text up to the seconds; then `Z` is .000 and `.123Z` is .123.
      let c = buf.compare(buf, dy, dy + SECONDS_LEN, dx, dx + SECONDS_LEN);
      if (c === 0) {
        const fx =
          buf[dx + SECONDS_LEN] === Z
            ? 0
            : Number(buf.toString('latin1', dx + SECONDS_LEN + 1, (dateEnd[x] as number) - 1));
        const fy =
          buf[dy + SECONDS_LEN] === Z
            ? 0
            : Number(buf.toString('latin1', dy + SECONDS_LEN + 1, (dateEnd[y] as number) - 1));
        c = fx - fy;
      }
      if (c !== 0) return c > 0;
      return buf.compare(buf, id[y], idEnd[y], id[x], idEnd[x]) < 0;
    };
    for (let k = 0; k < edges; k++) {
      const a = start[k] as number;
      const z = start[k + 1] as number;
      if (z - a < 2) continue;
      if (z - a > 32) {
        order.set(
          Array.from(order.subarray(a, z)).sort((x, y) => (before(x, y) ? -1 : 1)),
          a,
        );
        continue;
      }
      for (let i = a + 1; i < z; i++) {
        const x = order[i] as number;
        let j = i - 1;
        while (j >= a && before(x, order[j] as number)) {
          order[j + 1] = order[j] as number;
          j--;
        }
        order[j + 1] = x;
      }
    }
  }
}

/** How the importing thread hands evidence over and has Edge rows written. */
export interface EvidenceSink {
  /** Where the importing thread writes items (EvidenceLines.add); they are handed over at the next flush(). */
  readonly lines: EvidenceLines;
  /** Hands over the records taken so far; waits while the store is behind. */
  flush(): Promise<void>;
  /** Forgets every record: a second pass over the evidence follows. */
  reset(): Promise<void>;
  /** No more records come: completes the buckets. */
  seal(): Promise<void>;
  /** Edge rows go to `w`, the Edge staging file with its header written (a worker appends to it once closed). */
  startEdges(w: ChunkWriter): Promise<void>;
  /** Has the Edge rows of bucket b written (see BucketStore.writeEdges); may return before they are. */
  writeEdges(b: number, lo: number, hi: number, prefixes: Buffer): Promise<void>;
  /** Waits until every Edge row is written and the file closed. */
  finish(): Promise<void>;
  /** Stops at once. The bucket files are left for the caller to remove. */
  abort(): Promise<void>;
  /** Where the buckets are filled by a worker: a port through which another thread can add to them (PortSink). */
  connect?(): Promise<MessagePort>;
}

/** Bytes of records gathered before they are handed to the store. */
const HANDOVER_BYTES = 1 << 16;

class LocalSink implements EvidenceSink {
  readonly lines = new EvidenceLines(HANDOVER_BYTES * 2);

  constructor(private readonly store: BucketStore) {}

  async flush(): Promise<void> {
    if (this.lines.size === 0) return;
    await this.store.add(this.lines.take());
  }

  async reset(): Promise<void> {
    this.lines.take();
    await this.store.reset();
  }

  async seal(): Promise<void> {
    await this.flush();
    await this.store.seal();
  }

  async startEdges(w: ChunkWriter): Promise<void> {
    await w.close();
    await this.store.startEdges(w.path);
  }

  writeEdges(b: number, lo: number, hi: number, prefixes: Buffer): Promise<void> {
    return this.store.writeEdges(b, lo, hi, prefixes);
  }

  async finish(): Promise<void> {
    await this.store.finishEdges();
  }

  async abort(): Promise<void> {
    await this.store.abandon();
    await this.store.abandonEdges();
  }
}

/** What the importing thread asks of the worker; it answers each request, in order, with an EvidenceWorkerReply. */
export type EvidenceWorkerRequest =
  | { type: 'add'; records: Uint8Array }
  | { type: 'reset' }
  | { type: 'seal' }
  | { type: 'edges-file'; path: string }
  | { type: 'edges'; b: number; lo: number; hi: number; prefixes: Uint8Array }
  | { type: 'finish' }
  /** Another channel to take requests from, answered on it: WorkerSink.connect. */
  | { type: 'port'; port: MessagePort };

export interface EvidenceWorkerReply {
  type: 'done';
}

export interface EvidenceWorkerData {
  dir: string;
  nBuckets: number;
  nEdges: number;
}

/** Batches of records the worker may be behind; more would only pile up in its message queue. */
const MAX_BEHIND = 16;

/**
 * Requests to the evidence worker over one channel (the worker itself, or a port to it that another
 * thread was given), each answered in order; a failure of the worker or the channel is rethrown at
 * the next request or wait.
 */
class Requests {
  private sent = 0;
  private answered = 0;
  private failure: Error | null = null;
  /** Called when the worker answers, fails or stops. */
  private wake: (() => void) | null = null;

  constructor(private readonly to: Worker | MessagePort) {
    to.on('message', () => {
      this.answered++;
      this.signal();
    });
    if (to instanceof Worker) {
      to.on('error', (e) => this.fail(e));
      to.on('exit', (code) => {
        if (this.answered < this.sent) this.fail(new Error(`evidence worker stopped with exit code ${code}`));
        this.signal();
      });
    } else {
      to.on('close', () => {
        if (this.answered < this.sent) this.fail(new Error('the evidence worker closed its port'));
        this.signal();
      });
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  send(m: EvidenceWorkerRequest, transfer: Transferable[] = []): void {
    if (this.failure !== null) throw this.failure;
    this.sent++;
    this.to.postMessage(m, transfer);
  }

  /** Waits until at most `behind` requests are unanswered. */
  async until(behind: number): Promise<void> {
    for (;;) {
      if (this.failure !== null) throw this.failure;
      if (this.sent - this.answered <= behind) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/** Hands records over to the evidence worker through one channel. */
abstract class HandOver {
  /**
   * Records as UTF-8, handed over by moving the buffer: posting them as a
   * string copies it, which cost the importing thread seconds per ten million items.
   */
  readonly lines = new EvidenceLines(HANDOVER_BYTES * 2);

  constructor(protected readonly requests: Requests) {}

  protected handOver(): void {
    const records = this.lines.take();
    this.requests.send({ type: 'add', records }, [records.buffer as ArrayBuffer]);
  }

  async flush(): Promise<void> {
    if (this.lines.size >= HANDOVER_BYTES) this.handOver();
    await this.requests.until(MAX_BEHIND);
  }
}

class WorkerSink extends HandOver implements EvidenceSink {
  private readonly worker: Worker;

  constructor(data: EvidenceWorkerData) {
    const worker = new Worker(EVIDENCE_WORKER_FILE, { workerData: data });
    super(new Requests(worker));
    this.worker = worker;
  }

  /**
   * A port another thread can fill the buckets through (PortSink), beside this sink. Its records are
   * added in whatever order the two arrive: the buckets sort each edge's items.
   */
  async connect(): Promise<MessagePort> {
    const { port1, port2 } = new MessageChannel();
    this.requests.send({ type: 'port', port: port1 }, [port1]);
    await this.requests.until(0);
    return port2;
  }

  async reset(): Promise<void> {
    this.lines.take();
    this.requests.send({ type: 'reset' });
    await this.requests.until(0);
  }

  async seal(): Promise<void> {
    if (this.lines.size > 0) this.handOver();
    this.requests.send({ type: 'seal' });
    await this.requests.until(0);
  }

  async startEdges(w: ChunkWriter): Promise<void> {
    await w.close();
    this.requests.send({ type: 'edges-file', path: w.path });
  }

  async writeEdges(b: number, lo: number, hi: number, prefixes: Buffer): Promise<void> {
    // The buffer moves to the worker (TextBuffer.take gives one of its own).
    this.requests.send({ type: 'edges', b, lo, hi, prefixes }, [prefixes.buffer as ArrayBuffer]);
    // One bucket being written and one waiting keep the worker busy.
    await this.requests.until(1);
  }

  async finish(): Promise<void> {
    this.requests.send({ type: 'finish' });
    await this.requests.until(0);
  }

  async abort(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * Evidence items of another thread, added to the buckets of a WorkerSink through the port its
 * connect() gave. Only lines, flush and seal are for this side: seal hands over the last records and
 * waits until every one is in its bucket; the buckets stay open for the WorkerSink.
 */
export class PortSink extends HandOver implements EvidenceSink {
  constructor(private readonly port: MessagePort) {
    super(new Requests(port));
  }

  async seal(): Promise<void> {
    if (this.lines.size > 0) this.handOver();
    await this.requests.until(0);
    this.port.close();
  }

  reset(): Promise<void> {
    return notHere('reset');
  }

  startEdges(): Promise<void> {
    return notHere('startEdges');
  }

  writeEdges(): Promise<void> {
    return notHere('writeEdges');
  }

  finish(): Promise<void> {
    return notHere('finish');
  }

  abort(): Promise<void> {
    this.port.close();
    return Promise.resolve();
  }
}

function notHere(what: string): Promise<never> {
  return Promise.reject(new Error(`PortSink.${what}: only the thread of the WorkerSink may do this`));
}

const EVIDENCE_WORKER_FILE = join(__dirname, 'evidence-worker.js');

/** Whether the compiled worker script is there (it is not when running from TypeScript sources). */
export function evidenceWorkerAvailable(): boolean {
  return workerFileAvailable(EVIDENCE_WORKER_FILE);
}

/** Creates the bucket files of an import in `dir` and a sink that fills them, in a worker thread or in this one. */
export async function openEvidenceSink(
  dir: string,
  nBuckets: number,
  nEdges: number,
  inWorker: boolean,
): Promise<EvidenceSink> {
  if (inWorker) return new WorkerSink({ dir, nBuckets, nEdges });
  const store = new BucketStore(dir, nBuckets, nEdges);
  await store.open();
  return new LocalSink(store);
}

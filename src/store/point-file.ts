import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logger';
import { derivedState, oncePerGeneration } from './derived-state';
import type { DerivedState, GenerationRead } from './derived-state';
import type { CompanyProfile, EdgeRecord, Evidence } from '../domain/model';
import { evidenceFromArray, toEdge, toProfile } from './mappers';
import type { Props } from './mappers';
import { EVIDENCE_FIELDS, STAGING_DELIMITER } from './tables';
import type { TableName } from './tables';
import { stagedRowDecoder } from './staging-file';
import {
  openIfThere,
  processAlive,
  readExactly,
  readExactlyAsync,
  temporaryFor,
  writeFully,
} from './file-io';
import { fnv1a } from './string-hash';
import { lowerBound } from './bisect';
import { LineEntries } from './staged-keys';
import type { StagedKeys } from './staged-keys';

/**
 * Version of the file's layout, in its header: a file of another layout
 * is not used, and the rows are read from the engine again. Layout 1 was a
 * SQLite database; layout 2 held the engine's rows as it returned them, which
 * every read then mapped; layout 3 held mapped rows only. Layout 4 may hold a
 * kind's rows as staged lines instead (see Footer.staged), which a build of
 * layout 3 would take for JSON; layout 5 may keep a kind's rows in a file of
 * their own (see Footer.apart), which a build of layout 4 would look for in
 * this one; layout 6 may hold a staged DOUBLE in the exact form of the embedded
 * engine's exports (`<m>p<s>`, see exactNumber: a server keeps its edge export
 * as the file's edges), which a build of layout 5 would read as NaN. Files of
 * layouts 3, 4 and 5 are still read.
 */
const LAYOUT = 6;
const READABLE = [3, 4, 5, LAYOUT];

/** First and last bytes of a point-read file. */
const MAGIC = Buffer.from('tgpoint\0', 'latin1');
/** The magic, the layout as a 32-bit number, four bytes kept zero. */
const HEADER_BYTES = 16;
/** The footer's last bytes: the length of its JSON (32 bits, then 32 zero bits) and the magic. */
const TRAILER_BYTES = 16;

/** The two kinds of record a point read asks for by key, and the column that holds the key. */
const KEY_COLUMNS = { companies: 'vid', edges: 'edge_id' } as const;
type Kind = keyof typeof KEY_COLUMNS;
/** The staging table whose lines a kind's rows may be (see Footer.staged). */
const STAGED_TABLES = { companies: 'Company', edges: 'Edge' } as const satisfies Record<Kind, TableName>;
const KINDS = Object.keys(KEY_COLUMNS) as Kind[];

/**
 * How many high bits of the hash the index keeps: as many as fit beside the
 * row's number in the 53 bits of a double, which is what the writer sorts on.
 * Fewer bits only make two keys share an index value more often; a read checks
 * the key of every row it finds.
 */
function hashBits(count: number): number {
  return Math.min(32, 53 - Math.max(1, Math.ceil(Math.log2(count + 1))));
}

/** One kind's index: hashes in order, and where each row is in the file. */
interface Index {
  hashes: Uint32Array;
  offsets: Float64Array;
  lengths: Uint32Array;
  shift: number;
}

/** Where a kind's index is in the file, as the footer states it. */
interface IndexPlace {
  count: number;
  bits: number;
  /** Offsets of the hashes, offsets and lengths arrays. */
  at: [number, number, number];
}

interface Footer {
  key: string;
  indexes: Record<Kind, IndexPlace>;
  /**
   * The kinds whose rows are lines of an import's staging files (tables.ts), each with its
   * columns, key first: an import keeps its staging file of the table (see `apart`;
   * staged-point-file.ts), and a read decodes and maps its one row (stagedRowDecoder, toProfile,
   * toEdge). Files of layout 4, and of layout 5 by earlier builds, may hold such lines in this file
   * itself; they are read alike. The other kinds' rows are mapped records as JSON.
   */
  staged?: Partial<Record<Kind, string[]>>;
  /**
   * The kinds whose rows are in a file of their own beside this one, by its name in the same
   * directory and its size: an import's staging file of their table, kept as it is (see
   * PointFileWriter.addStagingFile). Their offsets are in that file.
   */
  apart?: Partial<Record<Kind, { file: string; bytes: number }>>;
}

/**
 * Company profiles and edges with their evidence, one record per key, in a
 * file written once per graph generation and kept beside it (the embedded
 * store's `<generation>.point-reads`, a Neo4j server's
 * `neo4j-<server>.point-reads` in DATA_DIR). The embedded engine spends about
 * half a millisecond of its own threads on every point query, however small,
 * and a Neo4j read is a Bolt round trip costing as much of ours; here a read is
 * a binary search in an index held in memory (16 bytes a row) and one `pread`
 * of the record's JSON, on the calling thread.
 *
 * The file: a header (magic, layout), the rows as UTF-8 text one after the
 * other, then per kind the index (the key hashes in order, each row's offset
 * and length), then a JSON footer (the data's key, the indexes' places, the
 * kinds kept as staged lines) and a trailer (the footer's length, the magic).
 * The stores write each engine row through the same mapper as their own reads
 * (toProfile, toEdge) as JSON, so both answer alike, and a read is then one
 * JSON.parse: no identifiers, addresses or evidence parsed a second time from
 * the JSON text inside the row, no evidence sorted, no dates checked (at 1M,
 * the `pread` included, a profile read costs about 7.2 microseconds instead of
 * 9.1, an edge about 6.6 instead of 9.4). An import keeps its edges' staging
 * lines as they are instead (staged-point-file.ts), and a read maps its one row.
 */
export class PointFile {
  /** Holds one row while it is decoded; grown when a row is longer. */
  private buffer = Buffer.allocUnsafe(64 * 1024);

  private constructor(
    /** Where each kind's rows are read: this file, or the one they are kept apart in. */
    private fds: Record<Kind, number> | null,
    private readonly indexes: Record<Kind, Index>,
    readonly counts: Record<Kind, number>,
    /** Decoders of the kinds whose rows are staged lines (see Footer.staged). */
    private readonly staged: Partial<Record<Kind, (fields: readonly string[]) => Props>>,
    /** The file and those it keeps rows apart in. */
    private readonly files: readonly string[],
  ) {}

  /**
   * Opens the file written for `key`. Null when there is none, or when it was
   * written for another key or layout; rejects when it cannot be read. Its indexes (some 100 MB at
   * 1M companies with their edges) are read on Node's thread pool: a server opens the file after
   * every switch to an import, and its requests went on waiting for 60-340 ms of reads.
   * `held`: the indexes as the writer of the file wrote them (see writePointFile), used instead of
   * reading them back.
   */
  static async open(file: string, key: string, held?: Record<Kind, Index>): Promise<PointFile | null> {
    if (!fs.existsSync(file)) return null;
    const fd = fs.openSync(file, 'r');
    const fds = { companies: fd, edges: fd } as Record<Kind, number>;
    const files = [file];
    try {
      const footer = readFooter(fd);
      if (!footer || footer.key !== key) {
        fs.closeSync(fd);
        return null;
      }
      const indexes = {} as Record<Kind, Index>;
      const counts = {} as Record<Kind, number>;
      const staged: Partial<Record<Kind, (fields: readonly string[]) => Props>> = {};
      for (const kind of KINDS) {
        indexes[kind] = held
          ? checkHeld(held[kind], footer.indexes[kind])
          : await readIndex(fd, footer.indexes[kind]);
        counts[kind] = footer.indexes[kind].count;
        const columns = footer.staged?.[kind];
        if (columns) staged[kind] = stagedRowDecoder(STAGED_TABLES[kind], checkKeyFirst(kind, columns));
        const apart = footer.apart?.[kind];
        if (apart) {
          const opened = openApart(file, apart);
          fds[kind] = opened.fd;
          files.push(opened.file);
        }
      }
      return new PointFile(fds, indexes, counts, staged, files);
    } catch (err) {
      closeAll(fds);
      throw err;
    }
  }

  /** The profile of `vid`, or null. */
  company(vid: string): CompanyProfile | null {
    const row = this.read('companies', vid);
    if (!row || !this.staged.companies) return row as CompanyProfile | null;
    return toProfile(row);
  }

  /** The profiles of the companies of `vids` that it holds, in that order. */
  companies(vids: readonly string[]): CompanyProfile[] {
    return vids.flatMap((vid) => {
      const row = this.company(vid);
      return row ? [row] : [];
    });
  }

  /** Whether the edges were written into the file (see EmbeddedStoreOptions.pointFileEdges). */
  get holdsEdges(): boolean {
    return this.counts.edges > 0;
  }

  /** The edge `edgeId` with its evidence, or null (also when the file holds no edges). */
  edge(edgeId: string): EdgeRecord | null {
    const row = this.read('edges', edgeId);
    if (!row) return null;
    if (this.staged.edges) return toEdge(row);
    const stored = row as unknown as StoredEdge;
    const edge = stored as unknown as EdgeRecord;
    edge.evidences = stored.evidences.map((item) => evidenceFromArray(item) as unknown as Evidence);
    return edge;
  }

  /** The row of `key`: a mapped record, or a staged line's properties (see Footer.staged). */
  private read(kind: Kind, key: string): Props | null {
    const { hashes, offsets, lengths, shift } = this.indexes[kind];
    const decode = this.staged[kind];
    const h = fnv1a(key) >>> shift;
    for (let i = lowerBound(hashes, h); i < hashes.length && hashes[i] === h; i++) {
      const text = this.text(kind, offsets[i]!, lengths[i]!);
      if (decode) {
        const fields = text.split(STAGING_DELIMITER);
        if (fields[0] === key) return decode(fields);
        continue;
      }
      const row = JSON.parse(text) as Props;
      if (row[KEY_COLUMNS[kind]] === key) return row;
    }
    return null;
  }

  private text(kind: Kind, offset: number, length: number): string {
    if (this.fds === null) throw new Error('point-read file closed');
    if (length > this.buffer.length) this.buffer = Buffer.allocUnsafe(length);
    readFully(this.fds[kind], this.buffer, length, offset);
    return this.buffer.toString('utf8', 0, length);
  }

  /** The bytes of the file and of those it keeps rows apart in. */
  get bytes(): number {
    return this.files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
  }

  /**
   * Reads the file and those it keeps rows apart in through once, a chunk at a time on Node's
   * thread pool, so that the page cache holds them: a point read is a synchronous `pread`, and one
   * that goes to the disk holds up every request behind it. Stops when the file is closed;
   * resolves with the bytes read.
   */
  async warm(): Promise<number> {
    const chunk = Buffer.allocUnsafe(WARM_CHUNK);
    let read = 0;
    for (const file of this.files) {
      const handle = await fs.promises.open(file, 'r');
      try {
        for (;;) {
          if (this.fds === null) return read;
          const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
          if (bytesRead === 0) break;
          read += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
    return read;
  }

  /** Once only: a descriptor closed twice could be another file's by then. */
  close(): void {
    if (this.fds === null) return;
    closeAll(this.fds);
    this.fds = null;
  }
}

/** Opens the file a kind's rows are kept in apart from `file` (see Footer.apart); throws when it is not the one written. */
function openApart(file: string, apart: { file: string; bytes: number }): { fd: number; file: string } {
  const name = path.basename(apart.file);
  if (name !== apart.file || !name.startsWith(`${path.basename(file)}.`))
    throw new Error(`point-read file names ${apart.file} as its rows' file`);
  const at = path.join(path.dirname(file), name);
  const fd = fs.openSync(at, 'r');
  if (fs.fstatSync(fd).size !== apart.bytes) {
    fs.closeSync(fd);
    throw new Error(`the rows' file ${name} of a point-read file is not the one written with it`);
  }
  return { fd, file: at };
}

/** Closes each descriptor once. */
function closeAll(fds: Record<Kind, number>): void {
  for (const fd of new Set(Object.values(fds))) fs.closeSync(fd);
}

/**
 * The file saved under `key` when `fits` its counts; null when there is none, it was written for
 * other data, or it cannot be read (logged: the caller writes it anew).
 */
export async function openMatching(
  file: string,
  key: string,
  fits: (counts: Readonly<Record<Kind, number>>) => boolean,
  logger?: Logger,
): Promise<PointFile | null> {
  let opened: PointFile | null = null;
  try {
    opened = await PointFile.open(file, key);
  } catch (err) {
    logger?.warn({ err, file }, 'point-read file unreadable; writing it anew');
    return null;
  }
  if (opened && !fits(opened.counts)) {
    opened.close();
    return null;
  }
  return opened;
}

/**
 * Writes the point-read file `file` for `key` with `fill` and opens it. Null, with nothing left
 * behind, when `fill` answers false (the data changed under it); throws when it wrote other counts
 * than `expected`, or failed.
 */
export async function writePointFile(
  file: string,
  key: string,
  expected: Readonly<Record<Kind, number>>,
  fill: (writer: PointFileWriter) => Promise<boolean>,
): Promise<PointFile | null> {
  const indexes = await writeFile(file, key, expected, fill);
  if (!indexes) return null;
  // The indexes the writer sorted are the ones it wrote: held as they are rather than read back
  // beside them (at 1M companies with their edges, 98 MB more at the end of a start's write).
  const opened = await PointFile.open(file, key, indexes);
  if (!opened) throw new Error(`point-read file ${file} not readable after writing it`);
  return opened;
}

/**
 * As writePointFile, for a writer that does not read the file itself (an import writes it for the
 * servers): whether it was written, without reading its index back.
 */
export async function fillPointFile(
  file: string,
  key: string,
  expected: Readonly<Record<Kind, number>>,
  fill: (writer: PointFileWriter) => Promise<boolean>,
): Promise<boolean> {
  return (await writeFile(file, key, expected, fill)) !== null;
}

/** Writes the file as writePointFile says; its indexes as written, or null when `fill` answers false. */
async function writeFile(
  file: string,
  key: string,
  expected: Readonly<Record<Kind, number>>,
  fill: (writer: PointFileWriter) => Promise<boolean>,
): Promise<Record<Kind, Index> | null> {
  const writer = new PointFileWriter(file, expected);
  try {
    if (!(await fill(writer))) {
      writer.abort();
      return null;
    }
    const { companies, edges } = writer.written;
    if (companies !== expected.companies || edges !== expected.edges)
      throw new Error(
        `the point-read file holds ${companies} companies and ${edges} edges, not the ${expected.companies} and ${expected.edges} counted`,
      );
    return writer.finish(key);
  } catch (err) {
    writer.abort();
    throw err;
  }
}

/**
 * Point reads from a file: `off` leaves them to the engine; `background` writes or opens the file
 * after every data change and the engine answers until it is there; `wait` makes a read wait (tests).
 */
export type PointFileMode = 'off' | 'background' | 'wait';

/**
 * A store's point-read file, held for the store generation it was written or opened for: `write`
 * runs at most once per generation, and the file answers only while its generation is the store's.
 */
export class HeldPointFile {
  private held: { generation: number; file: PointFile } | null = null;
  private reading: GenerationRead<PointFile> | null = null;

  constructor(
    readonly mode: PointFileMode,
    private readonly generation: () => number,
    /** Opens or writes the file of `generation`; null when the data changed under it (or nowhere to keep it). */
    private readonly write: (generation: number) => Promise<PointFile | null>,
    /** A write that failed while its generation was still the store's. */
    private readonly failed: (err: unknown, generation: number) => void,
    /** Whether a file, once held, is read through into the page cache (see warmUp). */
    private readonly warm: { enabled: boolean; logger?: Logger } = { enabled: false },
  ) {}

  /** The file of the data as it is now, or null (the engine answers). Use it before the next await. */
  get file(): PointFile | null {
    return this.held?.generation === this.generation() ? this.held.file : null;
  }

  /** Where the file of the data as it is now stands. */
  get state(): DerivedState {
    return derivedState(this.mode !== 'off', this.file !== null, this.reading, this.generation());
  }

  /**
   * Before a point read. In `wait` mode, resolves once the file of the data as it is now is there (or
   * could not be).
   */
  async ready(): Promise<void> {
    if (this.mode === 'wait' && !this.file) await this.read();
    // In the background a write that failed (its database away for a while) is begun again by a later
    // read, once oncePerGeneration lets it (RETRY_FAILED_MS); the engine answers meanwhile.
    // The failure is looked at first: on the usual read, with the file held, nothing more is.
    else if (this.reading?.failedAt !== undefined && this.mode === 'background' && !this.closed && !this.file)
      void this.read();
  }

  /** After a data change: the file held is closed, and in `background` mode (unless `start` is false) the next one begun. */
  changed(start = true): void {
    this.drop();
    if (start && this.mode === 'background') void this.read();
  }

  /** Opens or writes the file of this generation, once per generation; resolves with it, or null. */
  read(): Promise<PointFile | null> {
    if (this.mode === 'off') return Promise.resolve(null);
    const generation = this.generation();
    this.reading = oncePerGeneration(
      this.reading,
      generation,
      this.generation,
      async (g) => {
        const file = await this.write(g);
        if (file && this.generation() !== g) {
          file.close();
          return null;
        }
        if (file) {
          this.drop();
          this.held = { generation: g, file };
          if (this.warm.enabled) this.warming = this.warmUp(file);
        }
        return file;
      },
      this.failed,
    );
    return this.reading.done;
  }

  /**
   * Reads the file held through once, unless it would take more than half the memory the system has
   * available (it would push out what the other readers need). Warming never fails a read: at worst
   * the file answers from the disk, as it would without it.
   */
  private async warmUp(file: PointFile): Promise<void> {
    const logger = this.warm.logger;
    const started = Date.now();
    try {
      const bytes = file.bytes;
      const available = os.freemem();
      if (bytes > available / 2) {
        logger?.info({ bytes, available }, 'point-read file not warmed: more than half the memory available');
        return;
      }
      const read = await file.warm();
      const ms = Date.now() - started;
      if (read === bytes) logger?.info({ bytes, ms }, 'point-read file warmed into the page cache');
      else logger?.info({ bytes, read, ms }, 'point-read file warming stopped: the file was closed');
    } catch (err) {
      logger?.warn({ err }, 'point-read file not warmed');
    }
  }

  /** Waits for a write under way, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await this.reading?.done;
    this.drop();
    // Stops at its next chunk, now that the file is closed.
    await this.warming;
  }

  /** The warming of the file held last, under way or done. */
  private warming: Promise<void> | null = null;

  /** Set by close: no write is begun again after it (see ready). */
  private closed = false;

  private drop(): void {
    this.held?.file.close();
    this.held = null;
  }
}

/**
 * An edge as the file keeps it: each evidence item as its values in EVIDENCE_FIELDS order, the
 * order of toEvidence's fields too. Named, the fields made the 1M file 6.0 GB instead of 4.7;
 * a read makes the objects again with one literal each.
 */
type StoredEdge = Omit<EdgeRecord, 'evidences'> & { evidences: unknown[][] };

function storedEdge(edge: EdgeRecord): StoredEdge {
  return { ...edge, evidences: edge.evidences.map((e) => EVIDENCE_FIELDS.map((f) => e[f])) };
}

/** The columns of a kind's staged lines, which must begin with its key. */
function checkKeyFirst(kind: Kind, columns: readonly string[]): readonly string[] {
  if (columns[0] !== KEY_COLUMNS[kind])
    throw new Error(`staged ${kind} begin with ${columns[0]}, not ${KEY_COLUMNS[kind]}`);
  return columns;
}

/** Fills `into[0, length)` from the point-read file at `position`. */
function readFully(fd: number, into: Buffer, length: number, position: number): void {
  readExactly(fd, into, length, position, 'point-read file');
}

/** Layout 1 files were SQLite databases, which begin so. */
const SQLITE_HEADER = 'SQLite format 3\0';

/** The footer; null for a file of another layout; throws for anything else. */
function readFooter(fd: number): Footer | null {
  const size = fs.fstatSync(fd).size;
  if (size < HEADER_BYTES + TRAILER_BYTES) throw new Error('not a point-read file (too short)');
  const header = Buffer.alloc(HEADER_BYTES);
  readFully(fd, header, HEADER_BYTES, 0);
  if (header.toString('latin1') === SQLITE_HEADER) return null;
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a point-read file');
  if (!READABLE.includes(header.readUInt32LE(MAGIC.length))) return null;
  const trailer = Buffer.alloc(TRAILER_BYTES);
  readFully(fd, trailer, TRAILER_BYTES, size - TRAILER_BYTES);
  if (!trailer.subarray(8).equals(MAGIC)) throw new Error('point-read file cut short (no trailer)');
  const length = trailer.readUInt32LE(0);
  if (length > size - HEADER_BYTES - TRAILER_BYTES) throw new Error('point-read file footer out of bounds');
  const json = Buffer.alloc(length);
  readFully(fd, json, length, size - TRAILER_BYTES - length);
  return JSON.parse(json.toString('utf8')) as Footer;
}

/**
 * The files a point-read file keeps rows of a kind in (see Footer.apart), by their paths; none when
 * `file` is not there, not a point-read file, or unreadable (any other derived file, say).
 */
export function keptApart(file: string): string[] {
  const fd = openIfThere(file);
  if (fd === null) return [];
  try {
    const footer = readFooter(fd);
    const names = Object.values(footer?.apart ?? {}).map((a) => path.basename(a.file));
    return names.map((name) => path.join(path.dirname(file), name));
  } catch {
    return [];
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Moves a derived file into place, `from` to `to`. When they are point-read files, the rows the
 * one replaced kept apart are removed, but those the new one keeps: a reader that opened them
 * keeps reading them. Any other file is only renamed.
 */
export function moveDerivedFile(from: string, to: string): void {
  const replaced = keptApart(to);
  fs.renameSync(from, to);
  const kept = new Set(keptApart(to));
  for (const f of replaced) if (!kept.has(f)) fs.rmSync(f, { force: true });
}

/**
 * Removes the files a point-read file at `file` kept its rows of `kind` apart in (see
 * PointFileWriter.addStagingFile) that no point-read file beside it keeps now and whose writing
 * process has ended: those a write cut off by a crash or a kill left, each as big as its rows (2.2 GB
 * of edges at 1M companies), which nothing else removes before the generation goes. A file is kept
 * by any point-read file in the directory, not only by the one at `file`: one written under another
 * name and moved into place (the Neo4j store's import, `.import`) keeps the rows it was written with.
 * The writing process is the pid in the name: one still running may have a write under way; this
 * process's own are those it linked (`linkedHere`), so that a process with the pid of an ended one (pid
 * 1 in a container, every start) still removes that one's.
 */
export function removeOrphansApart(file: string, kind: Kind): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.${kind}-`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return; // no directory: nothing left behind
  }
  const candidates = names.filter((n) => n.startsWith(prefix));
  if (candidates.length === 0) return;
  const kept = new Set(
    names
      .filter((n) => n.includes('.point-reads') && !APART_NAME.test(n))
      .flatMap((n) => keptApart(path.join(dir, n)).map((f) => path.basename(f))),
  );
  for (const name of candidates) {
    if (kept.has(name) || linkedHere.has(name)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!(pid > 0) || (pid !== process.pid && processAlive(pid))) continue;
    fs.rmSync(path.join(dir, name), { force: true });
  }
}

/** The name of a file a point-read file keeps a kind's rows apart in (see addStagingFile). */
const APART_NAME = /\.(companies|edges)-\d+-[0-9a-z]+-\d+$/;

/** The names of the files this process kept rows apart in (see removeOrphansApart). */
const linkedHere = new Set<string>();

/** Removes a derived file and, for a point-read file, the rows it keeps apart. */
export function removeDerivedFile(file: string): void {
  for (const f of keptApart(file)) fs.rmSync(f, { force: true });
  fs.rmSync(file, { force: true });
}

/** What a finished point-read file holds, by kind, whatever data it was written for (for checks). */
export function pointFileCounts(file: string): Record<Kind, number> | null {
  const fd = fs.openSync(file, 'r');
  try {
    const footer = readFooter(fd);
    return footer && { companies: footer.indexes.companies.count, edges: footer.indexes.edges.count };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A kind's index from the rows noted, sorted in place: the kept hash bits of every row in order,
 * each row's offset and length beside its hash. The sort is on one double per row, the kept hash
 * bits above the row's number, so it needs no comparator; the offsets and lengths then follow that
 * order cycle by cycle in their own arrays, so that the rows' 16 bytes are held once, not twice
 * (98 MB at 1M companies with their edges), and only the sort's 8 bytes a row come and go.
 */
export function sortEntries(e: LineEntries): Index {
  const n = e.count;
  const bits = hashBits(n);
  const shift = 32 - bits;
  const scale = 2 ** (53 - bits);
  const hashes = e.hashes.subarray(0, n);
  const offsets = e.offsets.subarray(0, n);
  const lengths = e.lengths.subarray(0, n);
  const order = new Float64Array(n);
  for (let i = 0; i < n; i++) order[i] = (hashes[i]! >>> shift) * scale + i;
  order.sort();
  // Now the row at j is the one that was at from[j]; its hash is no longer needed where it was.
  const from = order;
  for (let j = 0; j < n; j++) {
    const i = order[j]! % scale;
    hashes[j] = (order[j]! - i) / scale;
    from[j] = i;
  }
  for (let start = 0; start < n; start++) {
    if (from[start]! < 0) continue;
    const offset = offsets[start]!;
    const length = lengths[start]!;
    let j = start;
    for (;;) {
      const i = from[j]!;
      from[j] = -1;
      if (i === start) {
        offsets[j] = offset;
        lengths[j] = length;
        break;
      }
      offsets[j] = offsets[i]!;
      lengths[j] = lengths[i]!;
      j = i;
    }
  }
  return { hashes, offsets, lengths, shift };
}

/** The index a writer held (see PointFile.open), when it is the one the footer describes. */
function checkHeld(index: Index, place: IndexPlace): Index {
  if (index.hashes.length !== place.count || index.shift !== 32 - place.bits)
    throw new Error('point-read file index not the one written');
  return index;
}

async function readIndex(fd: number, place: IndexPlace): Promise<Index> {
  const hashes = new Uint32Array(place.count);
  const offsets = new Float64Array(place.count);
  const lengths = new Uint32Array(place.count);
  for (const [i, array] of [hashes, offsets, lengths].entries()) {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    await readExactlyAsync(fd, bytes, bytes.length, place.at[i]!, 'point-read file');
  }
  for (let i = 1; i < hashes.length; i++) {
    // Lookups rely on the order; a damaged index is refused, and the file written again.
    if (hashes[i]! < hashes[i - 1]!) throw new Error('point-read file index out of order');
  }
  return { hashes, offsets, lengths, shift: 32 - place.bits };
}

/** Rows' files kept apart by this process so far (see PointFileWriter.addStagingFile). */
let apartWrites = 0;

/** Bytes read at a time while warming (PointFile.warm). */
const WARM_CHUNK = 1024 * 1024;

/** Rows are gathered into this many bytes before each write. */
const WRITE_CHUNK = 4 * 1024 * 1024;
/**
 * Writes a point-read file: rows go into `<file>.tmp-<pid>`, which becomes `file`
 * only when `finish` has written the index and the key, so a reader never sees
 * half a file and a write cut short leaves nothing behind once `abort` has run.
 */
export class PointFileWriter {
  private readonly tmp: string;
  private fd: number | null;
  private readonly entries: Record<Kind, LineEntries>;
  /** The columns of the kinds written as staged lines (see Footer.staged). */
  private readonly staged: Partial<Record<Kind, string[]>> = {};
  /** The kinds kept in files of their own (see Footer.apart), by their path. */
  private readonly apart: Partial<Record<Kind, { path: string; bytes: number }>> = {};
  private chunk = Buffer.allocUnsafe(WRITE_CHUNK);
  private used = 0;
  /** Bytes in the file, the gathered ones included. */
  private size = 0;

  /**
   * @param expected the rows of each kind that will be written, when known: their index is kept
   *   in arrays of that size from the start (at 1M companies with their edges, 98 MB instead of
   *   arrays doubled up to 151 MB, and 201 MB held for the last doubling's copy).
   */
  constructor(
    private readonly file: string,
    expected?: Readonly<Record<Kind, number>>,
  ) {
    this.entries = {
      companies: new LineEntries(expected?.companies),
      edges: new LineEntries(expected?.edges),
    };
    // Older layouts wrote `<file>.tmp`; another process's write under way keeps its own name.
    fs.rmSync(`${file}.tmp`, { force: true });
    this.tmp = temporaryFor(file);
    this.fd = fs.openSync(this.tmp, 'w');
    const header = Buffer.alloc(HEADER_BYTES);
    MAGIC.copy(header);
    header.writeUInt32LE(LAYOUT, MAGIC.length);
    this.append(header);
  }

  /** Profiles, as toProfile maps the rows of company/profiles-range. */
  addCompanies(profiles: readonly CompanyProfile[]): void {
    this.add('companies', profiles);
  }

  /**
   * One profile as the UTF-8 bytes of its JSON, `json[0, length)`, JSON.stringify of what toProfile
   * maps (StagedProfileWriter in staged-point-file.ts writes them without mapping), under the vid
   * whose fnv1a hash is `hash`.
   */
  addCompanyJson(hash: number, json: Buffer, length: number): void {
    if (this.staged.companies) throw new Error('companies written as staged lines and as records');
    // Reserved first: it may flush or replace the chunk.
    const at = this.reserve('companies', hash, length);
    json.copy(this.chunk, at, 0, length);
  }

  /** Edges, as toEdge maps the rows of edge/range. */
  addEdges(edges: readonly EdgeRecord[]): void {
    this.add('edges', edges.map(storedEdge));
  }

  /**
   * Every row of a kind: the lines of the staging file `stagingPath`, whose fields are `columns`,
   * the key first, and `keys` the keys the import saved beside it (staged-keys.ts). The file is
   * kept as it is, under a name of its own beside this one (a second link to it, or where the file
   * system allows none, a copy): neither read nor written again, so it must not be written to
   * after this (an import's staging never is: it is removed once the store is loaded). Nothing else
   * of the kind is written then.
   */
  addStagingFile(kind: Kind, columns: readonly string[], stagingPath: string, keys: StagedKeys): void {
    this.stagedAs(kind, columns);
    if (this.apart[kind] || this.entries[kind].count > 0) throw new Error(`${kind} written twice`);
    const bytes = fs.statSync(stagingPath).size;
    if (bytes !== keys.bytes) throw new Error(`the keys of ${stagingPath} are of a file of other size`);
    removeOrphansApart(this.file, kind);
    // A name no other write takes, in this process or another, however soon after.
    const kept = `${this.file}.${kind}-${process.pid}-${Date.now().toString(36)}-${++apartWrites}`;
    linkedHere.add(path.basename(kept));
    try {
      fs.linkSync(stagingPath, kept);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw err;
      fs.copyFileSync(stagingPath, kept, fs.constants.COPYFILE_EXCL);
    }
    this.apart[kind] = { path: kept, bytes };
    // Taken as they are, and sorted in place by `finish`.
    const entries = this.entries[kind];
    entries.hashes = keys.hashes;
    entries.offsets = keys.offsets;
    entries.lengths = keys.lengths;
    entries.count = keys.count;
  }

  /** Checks that a kind's rows are all staged lines of the same columns. */
  private stagedAs(kind: 'companies' | 'edges', columns: readonly string[]): void {
    const held = this.staged[kind];
    if (held === undefined) {
      if (this.entries[kind].count > 0) throw new Error(`${kind} written as records and as staged lines`);
      this.staged[kind] = [...checkKeyFirst(kind, columns)];
    } else if (held.length !== columns.length || held.some((c, i) => c !== columns[i]))
      throw new Error(`${kind} staged with other columns`);
  }

  private add(kind: Kind, records: readonly (CompanyProfile | StoredEdge)[]): void {
    if (this.staged[kind]) throw new Error(`${kind} written as staged lines and as records`);
    for (const record of records) {
      const key = (record as unknown as Props)[KEY_COLUMNS[kind]];
      if (typeof key === 'string') this.put(kind, key, JSON.stringify(record));
    }
  }

  private put(kind: Kind, key: string, text: string): void {
    // A row without its key maps to an empty one: nothing could ask for it.
    if (key === '') return;
    const length = Buffer.byteLength(text);
    const at = this.reserve(kind, fnv1a(key), length);
    this.chunk.write(text, at);
  }

  /** Notes a row of `length` bytes under `hash` and answers where in the chunk its bytes go. */
  private reserve(kind: Kind, hash: number, length: number): number {
    this.entries[kind].push(hash, this.size, length);
    if (this.used + length > this.chunk.length) this.flush();
    if (length > this.chunk.length) this.chunk = Buffer.allocUnsafe(length);
    const at = this.used;
    this.used += length;
    this.size += length;
    return at;
  }

  /** Rows written so far, by kind. */
  get written(): Readonly<Record<Kind, number>> {
    return { companies: this.entries.companies.count, edges: this.entries.edges.count };
  }

  /**
   * Writes the indexes and the key, closes the file and moves it into place; answers the indexes as
   * written. The rows noted are sorted in place into them: the writer takes no more rows after this.
   */
  finish(key: string): Record<Kind, Index> {
    const indexes = {} as Record<Kind, IndexPlace>;
    const written = {} as Record<Kind, Index>;
    for (const kind of KINDS) {
      written[kind] = sortEntries(this.entries[kind]);
      indexes[kind] = this.writeIndex(written[kind]);
    }
    const apart: Footer['apart'] = {};
    for (const kind of KINDS) {
      const kept = this.apart[kind];
      if (kept) apart[kind] = { file: path.basename(kept.path), bytes: kept.bytes };
    }
    const footer: Footer = {
      key,
      indexes,
      ...(Object.keys(this.staged).length > 0 ? { staged: this.staged } : {}),
      ...(Object.keys(apart).length > 0 ? { apart } : {}),
    };
    const json = Buffer.from(JSON.stringify(footer), 'utf8');
    const trailer = Buffer.alloc(TRAILER_BYTES);
    trailer.writeUInt32LE(json.length, 0);
    MAGIC.copy(trailer, 8);
    this.append(json);
    this.append(trailer);
    this.flush();
    fs.closeSync(this.fd!);
    this.fd = null;
    moveDerivedFile(this.tmp, this.file);
    return written;
  }

  /** Closes and removes the unfinished file, and the rows kept apart for it. */
  abort(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    fs.rmSync(this.tmp, { force: true });
    for (const kept of Object.values(this.apart)) fs.rmSync(kept.path, { force: true });
  }

  /** Writes a kind's sorted index (sortEntries): its three arrays, each at an offset that is a multiple of 8. */
  private writeIndex({ hashes, offsets, lengths, shift }: Index): IndexPlace {
    const at: number[] = [];
    for (const array of [hashes, offsets, lengths]) {
      const pad = (8 - (this.size % 8)) % 8;
      if (pad > 0) this.append(Buffer.alloc(pad));
      at.push(this.size);
      this.append(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
    }
    return { count: hashes.length, bits: 32 - shift, at: at as [number, number, number] };
  }

  private append(bytes: Buffer): void {
    if (this.used + bytes.length > this.chunk.length) this.flush();
    if (bytes.length > this.chunk.length) {
      writeFully(this.fd!, bytes);
    } else {
      bytes.copy(this.chunk, this.used);
      this.used += bytes.length;
    }
    this.size += bytes.length;
  }

  private flush(): void {
    writeFully(this.fd!, this.chunk, this.used);
    this.used = 0;
  }
}

import type { TierCompany, TierRelationship } from '../domain/tier-walk';
import type {
  ClusterMember,
  Page,
  PathStep,
  PathStepDirection,
  TierWalkRequest,
  TierWalkSink,
} from './graph-store';
import { bool, int, isDate, isoOfTime, num, str, strings, tierRelationship, toTierCompany } from './mappers';
import type { Props } from './mappers';
import { domicileSpellings, stronger } from './step-walk';
import type { Ranked } from './step-walk';
import { PackedStrings } from './packed-strings';
import { byCodePoints } from './point-reads';
import { fnv1a, hashOfBytes } from './string-hash';
import { SnapshotReader, SnapshotWriter } from './snapshot';
import type { ArrayKind } from './snapshot';
import { createHash } from 'node:crypto';
import type { Logger } from '../logger';

/**
 * The relationships of one graph generation, held in memory for tier-view walks.
 *
 * The engine answers a tier's relationships by scanning every relationship of the graph
 * (5.1M at 1M companies) and hands each row to JavaScript at about 0.4 µs a value, kept or
 * not; a 3-tier export of the biggest hub spent most of its seconds there, and a filtered one
 * (confidence, countries, a per-tier cap), stepped frontier by frontier, minutes. Here a walk
 * is a breadth-first search over arrays indexed by company offsets (the embedded engine's
 * internal offsets; on Neo4j, the order its companies were read in), with the same filters,
 * and only the rows an export writes are ever made into objects. Neo4j answers a walk by
 * frontier queries, a Bolt round trip per thousand companies and every far company's details
 * per relationship, twice; from memory the same walk needs none.
 *
 * Columns are typed arrays and byte buffers (company names and details as packed UTF-8), not
 * objects, so the garbage collector has almost nothing to trace: all of it lives off the
 * JavaScript heap. Built from the graph by either store after every data change it sees; the
 * graph stays the store of record and answers every walk until this is built.
 */

/** `status_code` stands for none. */
const NO_STATUS = -2_147_483_648;
const DAY_MS = 86_400_000;
/** Key of an absent list among the interned ones (no stored list is this text). */
const NO_LIST = '\u0000';
/** A company a per-tier cap left out: seen, so never reached again farther away, but in no tier. */
const LEFT_OUT = 127;

/** Why the memory cannot hold a graph exactly; the engine then keeps answering every walk. */
export class NotHeldExactly extends Error {}

/**
 * `latest_edge_date` (a timestamp, or epoch milliseconds as a number) as epoch milliseconds; NaN for
 * none (such a relationship is never walked).
 */
function timeOf(v: unknown): number {
  if (v === null || v === undefined) return NaN;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new NotHeldExactly('a relationship date is not a timestamp');
    return v;
  }
  if (!isDate(v) || Number.isNaN(v.getTime()))
    throw new NotHeldExactly('a relationship date is not a timestamp');
  return v.getTime();
}

/** The id of `value` (known by `key`) among `values`, which it joins when it is new. */
function intern<T>(ids: Map<string, number>, values: T[], key: string, value: T): number {
  let id = ids.get(key);
  if (id === undefined) {
    id = values.length;
    ids.set(key, id);
    values.push(value);
  }
  return id;
}

/** Collects the engine's rows; `finish` turns them into the walkable arrays. */
export class WalkMemoryBuilder {
  private readonly names: (string | null)[];
  private readonly legalNames: (string | null)[];
  /** cid_id where it differs from the vid (most companies are their own cluster). */
  private readonly cids: (string | null)[];
  /** is_cluster_parent: 1 true, 0 false, -1 unknown. */
  private readonly clusterFlags: Int8Array;
  /** cluster_parent_vid where it differs from the vid (resolved to offsets by `finish`). */
  private readonly parentVids = new Map<number, string>();
  /** Each company's domicile as stored, by its index in `countries` (0: none). */
  private readonly country: Uint16Array;
  /** The rest of a company's details, for exports that show them (the companies file). */
  private readonly websites: unknown[];
  /** 1 true, 0 false, -1 unknown. */
  private readonly isPublic: Int8Array;
  /** Index of the company's (industry, code system, code) in `industries`. */
  private readonly industry: Uint32Array;
  private readonly industryIds = new Map<string, number>();
  private readonly industries: (readonly [string | null, string | null, string | null])[] = [];
  private readonly counts: Float64Array;
  private readonly countryIds = new Map<string, number>();
  private readonly countries: (string | null)[] = [null];
  private readonly sup: Int32Array;
  private readonly cus: Int32Array;
  private readonly time: Float64Array;
  private readonly confidence: Float64Array;
  private readonly status: Int32Array;
  private readonly hs: Uint32Array;
  private readonly types: Uint32Array;
  private readonly edgeStart: Uint32Array;
  private edgeText = Buffer.alloc(1 << 16);
  private edgeBytes = 0;
  private readonly lists = new Map<string, number>();
  private readonly listTexts: string[] = [];
  /** The ids of the ASCII lists among `listTexts`, by the hash of their text (listIdOfBytes). */
  private readonly listsByHash = new Map<number, number[]>();
  private count = 0;
  private offsets: OffsetIndex | undefined;

  constructor(
    private readonly vids: readonly string[],
    private readonly capacity: number,
  ) {
    const n = vids.length;
    this.names = new Array<string | null>(n).fill(null);
    this.legalNames = new Array<string | null>(n).fill(null);
    this.cids = new Array<string | null>(n).fill(null);
    this.country = new Uint16Array(n);
    this.websites = new Array<unknown>(n).fill(null);
    this.isPublic = new Int8Array(n).fill(-1);
    this.clusterFlags = new Int8Array(n).fill(-1);
    this.industry = new Uint32Array(n);
    this.counts = new Float64Array(2 * n);
    this.sup = new Int32Array(capacity);
    this.cus = new Int32Array(capacity);
    this.time = new Float64Array(capacity);
    this.confidence = new Float64Array(capacity);
    this.status = new Int32Array(capacity);
    this.hs = new Uint32Array(capacity);
    this.types = new Uint32Array(capacity);
    this.edgeStart = new Uint32Array(capacity + 1);
  }

  addCompanies(rows: readonly Props[]): void {
    for (const r of rows) {
      const off = int(r.off);
      const vid = this.vids[off];
      if (vid === undefined) throw new NotHeldExactly('a company is not in the offset table');
      this.names[off] = str(r.name);
      this.legalNames[off] = str(r.company_legal_name);
      const cid = str(r.cid_id);
      this.cids[off] = cid === vid ? null : cid;
      const flag = bool(r.is_cluster_parent);
      this.clusterFlags[off] = flag === null ? -1 : flag ? 1 : 0;
      const parent = str(r.cluster_parent_vid) ?? vid;
      if (parent !== vid) this.parentVids.set(off, parent);
      this.country[off] = this.countryId(str(r.domiciled_country));
      this.websites[off] = r.websites ?? null;
      const listed = bool(r.is_public);
      this.isPublic[off] = listed === null ? -1 : listed ? 1 : 0;
      const industry = [str(r.industry), str(r.industry_code_system), str(r.industry_code)] as const;
      this.industry[off] = intern(this.industryIds, this.industries, JSON.stringify(industry), industry);
      this.counts[2 * off] = int(r.count_suppliers);
      this.counts[2 * off + 1] = int(r.count_customers);
    }
  }

  addRelationships(rows: readonly Props[]): void {
    for (const r of rows)
      this.addRelationship(
        int(r.s),
        int(r.c),
        timeOf(r.latest),
        num(r.confidence_score),
        num(r.status_code),
        this.listId(r.hs_codes),
        this.listId(r.evidence_types),
        str(r.edge_id) ?? '',
      );
  }

  /**
   * One relationship from the company at offset `s` to the one at `c`: its latest evidence as epoch
   * milliseconds (NaN: none), its other values as the engine gives them back, its lists by the ids
   * `listId` or `listIdOfBytes` gave them, and its edge id as text or as that text's UTF-8 bytes.
   */
  addRelationship(
    s: number,
    c: number,
    time: number,
    confidence: number | null,
    status: number | null,
    hsCodes: number,
    evidenceTypes: number,
    edgeId: string | Uint8Array,
  ): void {
    const n = this.vids.length;
    const i = this.count;
    if (i >= this.capacity) throw new NotHeldExactly('more relationships than counted');
    if (!(s >= 0 && s < n && c >= 0 && c < n))
      throw new NotHeldExactly('a relationship end is not a company');
    if (!Number.isNaN(time) && !Number.isSafeInteger(time))
      throw new NotHeldExactly('a relationship date is not a timestamp');
    this.sup[i] = s;
    this.cus[i] = c;
    this.time[i] = time;
    this.confidence[i] = confidence ?? NaN;
    if (status !== null && !(Number.isInteger(status) && status > NO_STATUS && status <= 2_147_483_647))
      throw new NotHeldExactly('a status code does not fit 32 bits');
    this.status[i] = status ?? NO_STATUS;
    const lists = this.listTexts.length;
    if (!(hsCodes >= 0 && hsCodes < lists && evidenceTypes >= 0 && evidenceTypes < lists))
      throw new Error('a list id the builder did not give');
    this.hs[i] = hsCodes;
    this.types[i] = evidenceTypes;
    const bytes = typeof edgeId === 'string' ? Buffer.byteLength(edgeId) : edgeId.length;
    if (this.edgeBytes + bytes > this.edgeText.length) {
      const grown = Buffer.alloc(Math.max(this.edgeText.length * 2, this.edgeBytes + bytes));
      this.edgeText.copy(grown, 0, 0, this.edgeBytes);
      this.edgeText = grown;
    }
    if (typeof edgeId === 'string') this.edgeText.write(edgeId, this.edgeBytes, 'utf8');
    else this.edgeText.set(edgeId, this.edgeBytes);
    this.edgeBytes += bytes;
    this.edgeStart[i + 1] = this.edgeBytes;
    this.count++;
  }

  private countryId(domicile: string | null): number {
    if (domicile === null) return 0;
    const id = intern(this.countryIds, this.countries, domicile, domicile);
    if (id > 0xffff) throw new NotHeldExactly('more than 65,535 distinct domiciles');
    return id;
  }

  /**
   * Lists (hs codes, evidence types) as the embedded engine stores them, `[a,b]`, or as Neo4j does, a
   * list of strings (kept as that text); few distinct ones exist.
   */
  listId(v: unknown): number {
    if (Array.isArray(v)) {
      // Elements never hold commas or brackets (staging contract); one that did could not be read back.
      if (!v.every((x) => typeof x === 'string' && !/[,[\]]/.test(x)))
        throw new NotHeldExactly('a list element is not a plain string');
      v = `[${v.join(',')}]`;
    }
    if (v !== null && v !== undefined && typeof v !== 'string')
      throw new NotHeldExactly('a list column is neither text nor a list');
    const text = v ?? NO_LIST;
    return intern(this.lists, this.listTexts, text, text);
  }

  /**
   * As listId, for the list that is the UTF-8 text of `bytes[start, end)` (as staged), found among
   * the lists met before without decoding it when it is ASCII: a 1M import has 5 million of them
   * and a few dozen distinct ones. `guess`, an id given before (the same column's on the line
   * before, say), is compared first: most lines repeat it, and it then costs no hash.
   */
  listIdOfBytes(bytes: Buffer, start: number, end: number, guess = -1): number {
    const guessed = guess >= 0 ? this.listTexts[guess] : undefined;
    if (guessed !== undefined && sameAscii(guessed, bytes, start, end)) return guess;
    const ascii = isAscii(bytes, start, end);
    const hash = ascii ? hashOfBytes(bytes, start, end) : -1;
    const known = ascii ? this.listsByHash.get(hash) : undefined;
    if (known) for (const id of known) if (sameAscii(this.listTexts[id]!, bytes, start, end)) return id;
    const id = this.listId(bytes.toString('utf8', start, end));
    if (ascii) this.listsByHash.set(hash, [...(known ?? []), id]);
    return id;
  }

  /**
   * The offset of `vid` among the builder's vids, or -1: for a store that names relationship ends by
   * vid (Neo4j). Call it once every company's vid is in place; the index it builds goes on to the
   * memory.
   */
  offsetOf(vid: string): number {
    this.offsets ??= OffsetIndex.of(this.vids);
    return this.offsets.get(vid);
  }

  /**
   * As offsetOf, for the vid that is the UTF-8 text of `bytes[start, end)`. `guess`, an offset the
   * caller expects (the supplier of the line before, the company after the one before), is compared
   * first and costs no hash when right.
   */
  offsetOfBytes(bytes: Buffer, start: number, end: number, guess = -1): number {
    this.offsets ??= OffsetIndex.of(this.vids);
    return this.offsets.getBytes(bytes, start, end, guess);
  }

  finish(): WalkMemory {
    const m = this.count;
    // A company whose cluster parent is no company leaves cluster reads to the store (-1).
    const parents = new Int32Array(this.vids.length);
    for (let o = 0; o < parents.length; o++) {
      const vid = this.parentVids.get(o);
      parents[o] = vid === undefined ? o : this.offsetOf(vid);
    }
    const edgeText = Buffer.alloc(this.edgeBytes);
    this.edgeText.copy(edgeText, 0, 0, this.edgeBytes);
    this.edgeText = Buffer.alloc(0);
    return new WalkMemory(
      {
        vids: this.vids,
        names: PackedStrings.from(this.names),
        legalNames: PackedStrings.from(this.legalNames),
        cids: PackedStrings.from(this.cids),
        country: this.country,
        countries: this.countries,
        websites: PackedStrings.from(this.websites.map((w) => (w === null ? null : JSON.stringify(w)))),
        isPublic: this.isPublic,
        industry: this.industry,
        industries: this.industries,
        counts: this.counts,
        parents,
        clusterFlags: this.clusterFlags,
        sup: this.sup.subarray(0, m),
        cus: this.cus.subarray(0, m),
        time: this.time.subarray(0, m),
        confidence: this.confidence.subarray(0, m),
        status: this.status.subarray(0, m),
        hs: this.hs.subarray(0, m),
        types: this.types.subarray(0, m),
        edgeStart: this.edgeStart.subarray(0, m + 1),
        edgeText,
        lists: this.listTexts.map((t) => Object.freeze(strings(t === NO_LIST ? null : t))),
      },
      { offsets: this.offsets },
    );
  }
}

/** What the memory holds, column by column (exported for tests that compare two memories). */
export interface Columns {
  vids: readonly string[];
  names: PackedStrings;
  legalNames: PackedStrings;
  /** cid_id where it differs from the vid. */
  cids: PackedStrings;
  country: Uint16Array;
  /** Stored domicile values by id; id 0 is none. */
  countries: readonly (string | null)[];
  /** Each company's websites as JSON text (null: none). */
  websites: PackedStrings;
  isPublic: Int8Array;
  industry: Uint32Array;
  industries: readonly (readonly [string | null, string | null, string | null])[];
  /** count_suppliers then count_customers of each company. */
  counts: Float64Array;
  /** Offset of each company's cluster parent (its own for a cluster of one); -1 throughout: not held. */
  parents: Int32Array;
  /** is_cluster_parent as stored: 1 true, 0 false (a cluster of one), -1 unknown. */
  clusterFlags: Int8Array;
  sup: Int32Array;
  cus: Int32Array;
  /** Latest evidence, epoch milliseconds; NaN: none. */
  time: Float64Array;
  confidence: Float64Array;
  status: Int32Array;
  hs: Uint32Array;
  types: Uint32Array;
  edgeStart: Uint32Array;
  edgeText: Buffer;
  /** Each distinct list, shared by the rows that hold it (frozen: a sink only reads it). */
  lists: readonly (readonly string[])[];
}

/**
 * How a saved memory holds each column but the vids (which the store has), in file order,
 * and how many entries the column has: one per company, two per company, one per
 * relationship, one more than the relationships, or any number.
 */
const SAVED: readonly (readonly [
  Exclude<keyof Columns, 'vids'>,
  ArrayKind | 'json' | 'bytes' | 'strings',
  'company' | 'twice' | 'rel' | 'edges' | 'any',
])[] = [
  ['names', 'strings', 'company'],
  ['legalNames', 'strings', 'company'],
  ['cids', 'strings', 'company'],
  ['country', 'u16', 'company'],
  ['countries', 'json', 'any'],
  ['websites', 'strings', 'company'],
  ['isPublic', 'i8', 'company'],
  ['industry', 'u32', 'company'],
  ['industries', 'json', 'any'],
  ['counts', 'f64', 'twice'],
  ['parents', 'i32', 'company'],
  ['clusterFlags', 'i8', 'company'],
  ['sup', 'i32', 'rel'],
  ['cus', 'i32', 'rel'],
  ['time', 'f64', 'rel'],
  ['confidence', 'f64', 'rel'],
  ['status', 'i32', 'rel'],
  ['hs', 'u32', 'rel'],
  ['types', 'u32', 'rel'],
  ['edgeStart', 'u32', 'edges'],
  ['edgeText', 'bytes', 'any'],
  ['lists', 'json', 'any'],
];

/**
 * The lookup tables a memory derives from its columns: saved after them, so that a load (at every
 * start and after every switch to an import) does not spend a few hundred milliseconds of the
 * thread that answers requests rebuilding them.
 */
interface Prepared {
  offsets: OffsetIndex;
  into: Adjacency;
  outOf: Adjacency;
}

/** Relationship indices grouped by one end: those of company `o` are `rels[start[o]]` to `rels[start[o + 1] - 1]`. */
interface Adjacency {
  start: Uint32Array;
  rels: Uint32Array;
}

/**
 * Whether a saved adjacency can be that of `relationships` relationships over `companies`
 * companies: its bounds rise from 0 to the relationships' count and every index is a relationship.
 */
function fitsAdjacency(a: Adjacency, companies: number, relationships: number): boolean {
  const { start, rels } = a;
  if (start.length !== companies + 1 || rels.length !== relationships || start[0] !== 0) return false;
  for (let o = 0; o < companies; o++) if (start[o + 1]! < start[o]!) return false;
  if (start[companies] !== relationships) return false;
  for (let k = 0; k < relationships; k++) if (rels[k]! >= relationships) return false;
  return true;
}

function adjacency(by: Int32Array, companies: number): Adjacency {
  const start = new Uint32Array(companies + 1);
  for (let i = 0; i < by.length; i++) start[by[i]! + 1]!++;
  for (let o = 0; o < companies; o++) start[o + 1]! += start[o]!;
  const fill = start.slice(0, companies);
  const rels = new Uint32Array(by.length);
  for (let i = 0; i < by.length; i++) rels[fill[by[i]!]!++] = i;
  return { start, rels };
}

/**
 * Offsets by vid: open addressing over an Int32Array of twice as many slots as companies
 * (8 MB at 1M) instead of a Map of a million entries on the heap; built in about 0.1 s.
 */
class OffsetIndex {
  /** The table, saved with the memory so that a load need not hash every vid again. */
  readonly slots: Int32Array;
  private readonly mask: number;

  /** The index of `vids`, or the one whose table `saved` is (see fromSlots). */
  private constructor(
    private readonly vids: readonly string[],
    saved?: Int32Array,
  ) {
    let size = 2;
    while (size < vids.length * 2) size *= 2;
    this.slots = saved ?? new Int32Array(size).fill(-1);
    this.mask = this.slots.length - 1;
    if (saved) return;
    vids.forEach((vid, o) => {
      if (!vid) return;
      let s = fnv1a(vid) & this.mask;
      while (this.slots[s] !== -1) s = (s + 1) & this.mask;
      this.slots[s] = o;
    });
  }

  static of(vids: readonly string[]): OffsetIndex {
    return new OffsetIndex(vids);
  }

  /**
   * The index of `vids` whose table `slots` was saved, or null when the table cannot be one (its
   * size, an offset out of range, no free slot): a damaged file is then not read.
   */
  static fromSlots(vids: readonly string[], slots: Int32Array): OffsetIndex | null {
    const size = slots.length;
    if (size < 2 * vids.length || (size & (size - 1)) !== 0) return null;
    let free = 0;
    for (let s = 0; s < size; s++) {
      const o = slots[s]!;
      if (o === -1) free++;
      else if (!(o >= 0 && o < vids.length)) return null;
    }
    return free === 0 ? null : new OffsetIndex(vids, slots);
  }

  /** The offset of `vid`, or -1. */
  get(vid: string): number {
    for (let s = fnv1a(vid) & this.mask; ; s = (s + 1) & this.mask) {
      const o = this.slots[s]!;
      if (o === -1 || this.vids[o] === vid) return o;
    }
  }

  /**
   * As `get`, for the vid that is the UTF-8 text of `bytes[start, end)`, decoded only when it is not
   * ASCII; the offset `guess` is compared first.
   */
  getBytes(bytes: Buffer, start: number, end: number, guess: number): number {
    // An offset of no company has '' or nothing: an empty text or a hole is never the guess's vid.
    const guessed = guess >= 0 ? this.vids[guess] : undefined;
    if (guessed && sameAscii(guessed, bytes, start, end)) return guess;
    if (!isAscii(bytes, start, end)) return this.get(bytes.toString('utf8', start, end));
    for (let s = hashOfBytes(bytes, start, end) & this.mask; ; s = (s + 1) & this.mask) {
      const o = this.slots[s]!;
      if (o === -1 || sameAscii(this.vids[o]!, bytes, start, end)) return o;
    }
  }
}

/** Whether `bytes[start, end)` is ASCII. */
function isAscii(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

/**
 * Whether `text` is the ASCII text of `bytes[start, end)`. A byte of 0x80 or more is never ASCII
 * (the text "Ã©" is not the bytes C3 A9, which are "é").
 */
function sameAscii(text: string, bytes: Buffer, start: number, end: number): boolean {
  if (text.length !== end - start) return false;
  for (let i = 0; i < text.length; i++) {
    const b = bytes[start + i]!;
    if (b >= 0x80 || text.charCodeAt(i) !== b) return false;
  }
  return true;
}

/** Sink calls carry at most this many rows. */
const BATCH = 1_000;

/**
 * Lets the event loop run between batches: a sink that never waits (its stream not full)
 * would otherwise keep requests waiting until the whole walk is written.
 */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
/**
 * Relationships a walk's steps look at between two turns of the event loop: about a millisecond
 * or two of a server's thread. A 6-tier walk of the biggest hub at 1M looks at millions and held
 * the thread for half a second in one go.
 */
export const WALK_SCAN_TURN = 20_000;

/**
 * The least confidence among the `wanted` most confident of `of` (indexes into `confidence`, none
 * NaN): what a page of the first `wanted` could show goes no lower, so those below it need no id
 * and no place in the order. -Infinity when every one fits; Infinity when none is wanted.
 */
function pageFloor(of: readonly number[], confidence: ArrayLike<number>, wanted: number): number {
  if (of.length <= wanted) return -Infinity;
  if (wanted <= 0) return Infinity;
  const values = new Float64Array(of.length);
  for (let i = 0; i < of.length; i++) values[i] = confidence[of[i]!]!;
  return nthSmallest(values, of.length - wanted);
}

/**
 * The value at index `n` of `values` sorted ascending, found by quickselect (linear on average;
 * it reorders `values`). Sorting took 2.5 ms for a hub's 15,000 confidences, selecting 0.3 ms.
 */
function nthSmallest(values: Float64Array, n: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    // Hoare's partition: [lo, j] holds values <= pivot, [i, hi] values >= pivot, between them the pivot's.
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i++] = values[j]!;
        values[j--] = t;
      }
    }
    if (n <= j) hi = j;
    else if (n >= i) lo = i;
    else return values[n]!;
  }
  return values[n]!;
}

/**
 * A walk request (see TierWalkRequest; an `evidenceFrom` of null walks every relationship, those
 * without a date too) with its root found: the company and its internal offset.
 */
export interface MemoryWalk extends Omit<TierWalkRequest, 'root'> {
  root: TierCompany;
  rootOffset: number;
}

/** What a saved memory was made from, checked before the rest is read. */
interface SavedHead {
  companies: number;
  relationships: number;
  /** Digest of the vids by internal offset: the offsets must name the same companies. */
  vids: string;
  /** The vids themselves follow the head (a store without offsets of its own: Neo4j). */
  holdsVids?: boolean;
}

/** The layout is part of the key: a file saved by a build with another layout is not read. */
const savedKey = (key: string) => `${key}#walk-memory-5`;

/** A company's websites as held in memory (JSON text) back as the engine gave them. */
const websitesOf = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** Vids hashed between turns of the event loop: some milliseconds of the main thread at a time. */
const DIGEST_TURN = 50_000;

/**
 * SHA-256 of the vids by offset, each followed by a newline. About 0.1–0.2 s at 1M companies,
 * so it lets requests in every DIGEST_TURN vids: a server computes it when it loads the memory.
 */
export async function vidsDigest(vids: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (let i = 0; i < vids.length; i += 10_000) {
    if (i > 0 && i % DIGEST_TURN === 0) await turn();
    hash.update(vids.slice(i, i + 10_000).join('\n') + '\n');
  }
  return hash.digest('hex');
}

/** Vids taken out of their packed form between turns of the event loop. */
const UNPACK_TURN = 50_000;

/**
 * The strings of `held` as an array, decoded UNPACK_TURN at a time with a turn of the event loop
 * between: a million vids take some tenths of a second, and a server reads them while it answers.
 */
export async function unpackedVids(held: PackedStrings): Promise<string[]> {
  const out = new Array<string>(held.length);
  for (let i = 0; i < held.length; i++) {
    if (i > 0 && i % UNPACK_TURN === 0) await turn();
    out[i] = held.get(i) ?? '';
  }
  return out;
}

export class WalkMemory {
  /** Towards suppliers: relationships by customer. Towards customers: by supplier. */
  private readonly into: Adjacency;
  private readonly outOf: Adjacency;
  /** Each day a row shows, as its text (`YYYY-MM-DD`). */
  private readonly dayText = new Map<number, string>();

  /** Offsets by vid: where a list page or a tier walk starts. */
  private readonly offsets: OffsetIndex;
  /** See clusterMembers. */
  private members: Adjacency | null | undefined;
  /** See clusterIds. */
  private cidParents: Map<string, number> | null | undefined;
  /** The group each cluster parent is in during one clusterRows call, else -1. */
  private groupScratch: Int32Array | undefined;

  constructor(
    private readonly c: Columns,
    prepared: Partial<Prepared> = {},
  ) {
    this.into = prepared.into ?? adjacency(c.cus, c.vids.length);
    this.outOf = prepared.outOf ?? adjacency(c.sup, c.vids.length);
    this.offsets = prepared.offsets ?? OffsetIndex.of(c.vids);
  }

  /**
   * The rows of relationship/list-suppliers or list-customers (embedded variant) for one page:
   * the relationships of `vid` at or above the confidence and on or after the date, by
   * confidence (highest first) and then relationship id, from `offset`, at most `count` of
   * them. The engine answers such a page by key in milliseconds, and most of its time at a
   * hub goes on ordering; here it is a filter and a sort of the company's own relationships.
   */
  listRows(
    vid: string,
    direction: 'suppliers' | 'customers',
    query: { minConfidence: number; evidenceFrom: Date | null; offset: number; count: number },
  ): Props[] {
    const o = this.offsetOf(vid);
    if (o < 0) return [];
    const c = this.c;
    const { adj, far } = this.towards(direction);
    const from = query.evidenceFrom?.getTime() ?? null;
    const picked: number[] = [];
    for (let k = adj.start[o]!; k < adj.start[o + 1]!; k++) {
      const rel = adj.rels[k]!;
      // As in the query, a missing confidence or date never passes a comparison.
      if (!(c.confidence[rel]! >= query.minConfidence)) continue;
      if (from !== null && !(c.time[rel]! >= from)) continue;
      picked.push(rel);
    }
    // Only the relationships as confident as the last one the page could show are named and ordered:
    // on a hub, naming and ordering every one made thousands of strings for a page of ten.
    const floor = pageFloor(picked, c.confidence, query.offset + query.count);
    const ids = new Map<number, string>();
    for (const rel of picked) if (c.confidence[rel]! >= floor) ids.set(rel, this.edgeId(rel));
    const page = [...ids.keys()];
    // Code-unit order of ASCII ids is the engine's byte order.
    page.sort((a, b) => c.confidence[b]! - c.confidence[a]! || (ids.get(a)! < ids.get(b)! ? -1 : 1));
    return page.slice(query.offset, query.offset + query.count).map((rel) => {
      const id = ids.get(rel)!;
      const time = c.time[rel]!;
      return {
        counterpart_offset: far[rel]!,
        relationship_id: id,
        confidence_score: c.confidence[rel]!,
        latest_relationship_date: Number.isNaN(time) ? null : new Date(time),
        evidence_types: c.lists[c.types[rel]!]!,
        edge_ids: [id],
      };
    });
  }

  /** A list page's rows (see listRows and clusterRows), or null when the memory does not hold them. */
  listPage(
    vid: string,
    direction: 'suppliers' | 'customers',
    grouping: 'company' | 'cluster',
    query: { minConfidence: number; evidenceFrom: Date | null; offset: number; count: number },
  ): Props[] | null {
    return grouping === 'company'
      ? this.listRows(vid, direction, query)
      : this.clusterRows(vid, direction, query);
  }

  /**
   * The rows of path/step-suppliers or path/step-customers for one frontier: every relationship
   * into (`suppliers`) or out of (`customers`) each of `vids`, with the company it reaches and that
   * company's count in the same direction (what expanding it next would read). A vid that is no
   * company has none; one given twice is read once, as the query's `IN` does.
   */
  pathSteps(vids: readonly string[], direction: PathStepDirection): PathStep[] {
    const c = this.c;
    const { adj, far } = this.towards(direction);
    const side = direction === 'suppliers' ? 0 : 1;
    const steps: PathStep[] = [];
    for (const vid of new Set(vids)) {
      const o = this.offsetOf(vid);
      if (o < 0) continue;
      for (let k = adj.start[o]!; k < adj.start[o + 1]!; k++) {
        const rel = adj.rels[k]!;
        const to = far[rel]!;
        const confidence = c.confidence[rel]!;
        steps.push({
          from: vid,
          to: c.vids[to]!,
          edge_id: this.edgeId(rel),
          confidence_score: Number.isNaN(confidence) ? null : confidence,
          latest_evidence_date: isoOfTime(c.time[rel]!),
          toDegree: c.counts[2 * to + side]!,
        });
      }
    }
    return steps;
  }

  /**
   * The parent of `vid`'s cluster (itself for a cluster of one), as company/get-cluster-parent has it;
   * null when `vid` is no company, undefined when the memory does not hold clusters.
   */
  clusterParentOf(vid: string): string | null | undefined {
    if (!this.clusterMembers()) return undefined;
    const o = this.offsetOf(vid);
    return o < 0 ? null : this.c.vids[this.c.parents[o]!]!;
  }

  /**
   * The rows of relationship/list-cluster-suppliers or list-cluster-customers (embedded variant) for
   * one page, or null when the memory does not hold clusters. The import derives a cluster
   * relationship for every pair of clusters that relationships cross (stage/derive.ts): it joins
   * the two parents, its id is the two cluster ids joined by `~`, and it carries the highest
   * confidence (0 at least), the latest date, every evidence type and the sorted edge ids of the
   * relationships it stands for. The same is summed up here from the relationships of the cluster's
   * members; the filters and the order apply to those sums, as they do to the stored ones.
   */
  clusterRows(
    vid: string,
    direction: 'suppliers' | 'customers',
    query: { minConfidence: number; evidenceFrom: Date | null; offset: number; count: number },
  ): Props[] | null {
    const members = this.clusterMembers();
    if (!members) return null;
    const c = this.c;
    const p = this.offsetOf(vid);
    // Cluster relationships join parents: another member of a cluster has none.
    if (p < 0 || c.parents[p] !== p) return [];
    const { adj, far } = this.towards(direction);
    const from = members.start[p]!;
    const to = members.start[p + 1]!;
    let scanned = 0;
    for (let i = from; i < to; i++)
      scanned += adj.start[members.rels[i]! + 1]! - adj.start[members.rels[i]!]!;
    // One group per counterpart cluster, by its parent.
    const groupOf = (this.groupScratch ??= new Int32Array(c.vids.length).fill(-1));
    const farParent = new Int32Array(scanned);
    const confidence = new Float64Array(scanned);
    const time = new Float64Array(scanned);
    const firstRel = new Int32Array(scanned);
    const rels = new Int32Array(scanned);
    let groups = 0;
    for (let i = from; i < to; i++) {
      const m = members.rels[i]!;
      for (let k = adj.start[m]!; k < adj.start[m + 1]!; k++) {
        const rel = adj.rels[k]!;
        const q = c.parents[far[rel]!]!;
        if (q === p) continue;
        let g = groupOf[q]!;
        if (g < 0) {
          g = groups++;
          groupOf[q] = g;
          farParent[g] = q;
          time[g] = NaN;
          firstRel[g] = rel;
        }
        rels[g]!++;
        // As the import sums them: a missing confidence or date never wins.
        if (c.confidence[rel]! > confidence[g]!) confidence[g] = c.confidence[rel]!;
        const t = c.time[rel]!;
        if (t > time[g]! || (Number.isNaN(time[g]!) && !Number.isNaN(t))) time[g] = t;
      }
    }
    for (let g = 0; g < groups; g++) groupOf[farParent[g]!] = -1;
    const evidenceFrom = query.evidenceFrom?.getTime() ?? null;
    const kept: number[] = [];
    for (let g = 0; g < groups; g++) {
      if (!(confidence[g]! >= query.minConfidence)) continue;
      if (evidenceFrom !== null && !(time[g]! >= evidenceFrom)) continue;
      kept.push(g);
    }
    // Only the groups as confident as the last one a page could show are ordered, and named.
    const floor = pageFloor(kept, confidence, query.offset + query.count);
    const own = this.cidOf(p);
    const ids = new Map<number, string>();
    for (const g of kept) {
      if (confidence[g]! < floor) continue;
      const other = this.cidOf(farParent[g]!);
      ids.set(g, direction === 'suppliers' ? `${other}~${own}` : `${own}~${other}`);
    }
    const page = [...ids.keys()];
    // Code-unit order of ASCII ids is the engine's byte order.
    page.sort((a, b) => confidence[b]! - confidence[a]! || (ids.get(a)! < ids.get(b)! ? -1 : 1));
    const rows = page.slice(query.offset, query.offset + query.count);
    const shared = rows.filter((g) => rels[g]! > 1);
    const found = this.clusterRelationships(
      p,
      shared.map((g) => farParent[g]!),
      direction,
    );
    const relationshipsOf = new Map(shared.map((g, i) => [g, found[i]!]));
    return rows.map((g) => {
      const of = relationshipsOf.get(g) ?? [firstRel[g]!];
      const t = time[g]!;
      return {
        counterpart_offset: farParent[g]!,
        relationship_id: ids.get(g)!,
        confidence_score: confidence[g]!,
        latest_relationship_date: Number.isNaN(t) ? null : new Date(t),
        evidence_types:
          of.length === 1
            ? c.lists[c.types[of[0]!]!]!
            : [...new Set(of.flatMap((rel) => c.lists[c.types[rel]!]!))].sort(),
        edge_ids: of.map((rel) => this.edgeId(rel)).sort(),
      };
    });
  }

  /**
   * For each parent of `qs` (none of them `p`), the relationships between the members of its cluster
   * and those of parent `p`'s, towards `direction` from `p`'s, in the order of `qs`. One pass over
   * the cluster's relationships serves the whole page: a pass per row took a big hub's cluster list
   * of 101 rows (a list head) some 150-240 ms of the main thread at 1M companies.
   */
  private clusterRelationships(
    p: number,
    qs: readonly number[],
    direction: 'suppliers' | 'customers',
  ): number[][] {
    const c = this.c;
    const members = this.members!;
    const { adj, far } = this.towards(direction);
    const found = qs.map((): number[] => []);
    if (qs.length === 0) return found;
    // Free (-1 everywhere) between clusterRows' own uses of it.
    const slotOf = (this.groupScratch ??= new Int32Array(c.vids.length).fill(-1));
    qs.forEach((q, i) => (slotOf[q] = i));
    for (let i = members.start[p]!; i < members.start[p + 1]!; i++) {
      const m = members.rels[i]!;
      for (let k = adj.start[m]!; k < adj.start[m + 1]!; k++) {
        const slot = slotOf[c.parents[far[adj.rels[k]!]!]!]!;
        if (slot >= 0) found[slot]!.push(adj.rels[k]!);
      }
    }
    for (const q of qs) slotOf[q] = -1;
    return found;
  }

  /**
   * A page of company/list-cluster-members: the members of the cluster `cidId`, the parent first, then
   * by name and vid; null when the memory does not hold clusters, or some member lacks a name or a
   * parent flag (the engine's order for those is its own).
   */
  clusterMembersPage(cidId: string, page: { limit: number; offset: number }): Page<ClusterMember> | null {
    const members = this.clusterMembers();
    const parents = members ? this.clusterIds() : null;
    if (!members || !parents) return null;
    const c = this.c;
    let p = this.offsetOf(cidId);
    if (p < 0 || c.parents[p] !== p || this.cidOf(p) !== cidId) p = parents.get(cidId) ?? -1;
    if (p < 0) return { items: [], hasMore: false };
    const all: ClusterMember[] = [];
    for (let i = members.start[p]!; i < members.start[p + 1]!; i++) {
      const o = members.rels[i]!;
      const name = c.names.get(o);
      const flag = c.clusterFlags[o]!;
      if (name === null || flag < 0) return null;
      const country = c.countries[c.country[o]!] ?? null;
      all.push({ vid: c.vids[o]!, name, country, is_cluster_parent: flag === 1 });
    }
    all.sort(
      (a, b) =>
        Number(b.is_cluster_parent) - Number(a.is_cluster_parent) ||
        byCodePoints(a.name, b.name) ||
        byCodePoints(a.vid, b.vid),
    );
    return {
      items: all.slice(page.offset, page.offset + page.limit),
      hasMore: all.length > page.offset + page.limit,
    };
  }

  /** A company's cid_id. */
  private cidOf(o: number): string {
    return this.c.cids.get(o) ?? this.c.vids[o]!;
  }

  /**
   * Cluster parents by cluster id, for the clusters whose id is not their parent's vid, built on the
   * first members page; null when two clusters would answer to one id, or a member's id is not its
   * parent's (then the engine, which matches the id itself, answers).
   */
  private clusterIds(): Map<string, number> | null {
    if (this.cidParents === undefined) {
      const c = this.c;
      let byCid: Map<string, number> | null = new Map<string, number>();
      for (let o = 0; byCid && o < c.vids.length; o++) {
        const p = c.parents[o]!;
        const cid = c.cids.get(o);
        if (p !== o) {
          if (this.cidOf(o) !== this.cidOf(p)) byCid = null;
          continue;
        }
        if (cid === null) continue;
        const named = this.offsetOf(cid);
        if (byCid.has(cid) || (named >= 0 && c.parents[named] === named && this.cidOf(named) === cid))
          byCid = null;
        else byCid.set(cid, o);
      }
      this.cidParents = byCid;
    }
    return this.cidParents;
  }

  /**
   * How many cluster relationships the memory derives (see clusterRows) between clusters that are
   * not both of one company (the import stores only those), or -1 when it does not hold clusters:
   * a store compares it with its own count before it lets cluster reads come from here.
   */
  private clusterRelationshipCount(): number {
    const members = this.clusterMembers();
    if (!members) return -1;
    const c = this.c;
    const seenBy = new Int32Array(c.vids.length).fill(-1);
    let count = 0;
    const single = (p: number) => members.start[p + 1]! - members.start[p]! === 1;
    for (let p = 0; p < c.vids.length; p++) {
      if (c.parents[p] !== p) continue;
      for (let i = members.start[p]!; i < members.start[p + 1]!; i++) {
        const m = members.rels[i]!;
        for (let k = this.outOf.start[m]!; k < this.outOf.start[m + 1]!; k++) {
          const q = c.parents[c.cus[this.outOf.rels[k]!]!]!;
          if (q === p || seenBy[q] === p || (single(p) && single(q))) continue;
          seenBy[q] = p;
          count++;
        }
      }
    }
    return count;
  }

  /**
   * Keeps cluster reads here only when the memory derives as many cluster relationships as the store
   * holds (`stored`), as it does for a graph the importer wrote.
   */
  keepClustersIf(stored: number, logger: Logger | undefined): void {
    const derived = this.clusterRelationshipCount();
    if (derived === stored || derived < 0) return;
    logger?.warn(
      { derived, stored },
      'cluster lists read by the store: its cluster relationships are not those of its relationships',
    );
    // Cluster reads go to the store from now on (and in the file saved after this).
    this.c.parents.fill(-1);
    this.members = null;
    this.cidParents = null;
  }

  /**
   * Companies grouped by their cluster parent (`rels` holding company offsets), built on the first
   * cluster read; null when some company's parent is not held or is not its own parent.
   */
  private clusterMembers(): Adjacency | null {
    if (this.members === undefined) {
      const parents = this.c.parents;
      let held = true;
      for (let o = 0; held && o < parents.length; o++) {
        const p = parents[o]!;
        held = p >= 0 && parents[p] === p;
      }
      this.members = held ? adjacency(parents, parents.length) : null;
    }
    return this.members;
  }

  /**
   * Towards suppliers: each company's relationships in, and their suppliers. Towards customers: its
   * relationships out, and their customers.
   */
  private towards(direction: PathStepDirection): { adj: Adjacency; far: Int32Array } {
    return direction === 'suppliers'
      ? { adj: this.into, far: this.c.sup }
      : { adj: this.outOf, far: this.c.cus };
  }

  /** The internal offset of the company `vid`, or -1 when it is not one. */
  offsetOf(vid: string): number {
    return this.offsets.get(vid);
  }

  /** The vid of the company at `offset` (a list row's counterpart_offset), or '' past the end. */
  vidAt(offset: number): string {
    return this.c.vids[offset] ?? '';
  }

  private edgeId(rel: number): string {
    return this.c.edgeText.toString('utf8', this.c.edgeStart[rel], this.c.edgeStart[rel + 1]);
  }

  get relationships(): number {
    return this.c.sup.length;
  }

  get companies(): number {
    return this.c.vids.length;
  }

  /** Bytes held, roughly (typed arrays, the edge id text and the packed company columns). */
  get bytes(): number {
    const columns: unknown[] = Object.values(this.c);
    const held = [...columns, this.into.start, this.into.rels, this.outOf.start, this.outOf.rels];
    if (this.members) held.push(this.members.start, this.members.rels);
    const size = (a: unknown) =>
      ArrayBuffer.isView(a) ? a.byteLength : a instanceof PackedStrings ? a.bytes : 0;
    return held.reduce<number>((n, a) => n + size(a), 0);
  }

  /**
   * Saves the memory in `file` under `key` (see GraphStore.derivedDataFile), so that the next
   * start loads it instead of reading every relationship from the engine again.
   */
  async save(file: string, key: string, { withVids = false }: { withVids?: boolean } = {}): Promise<void> {
    const c = this.c;
    const head: SavedHead = {
      companies: c.vids.length,
      relationships: c.sup.length,
      vids: await vidsDigest(c.vids),
      ...(withVids ? { holdsVids: true } : {}),
    };
    const w = new SnapshotWriter().json(head);
    if (withVids) PackedStrings.from(c.vids).writeTo(w);
    for (const [name, kind] of SAVED) {
      const column = c[name];
      if (kind === 'json') w.json(column);
      else if (kind === 'strings') (column as PackedStrings).writeTo(w);
      else if (kind === 'bytes') w.bytes(column as Buffer);
      else w.array(column as Parameters<SnapshotWriter['array']>[0]);
    }
    w.array(this.into.start).array(this.into.rels).array(this.outOf.start).array(this.outOf.rels);
    w.array(this.offsets.slots);
    return w.save(file, savedKey(key));
  }

  /**
   * Saves the memory as `save` does, logging how long it took or why it failed; never rejects, so a
   * store can keep the promise to wait for it on close.
   */
  saveLogged(
    file: string,
    key: string,
    logger: Logger | undefined,
    options?: { withVids?: boolean },
  ): Promise<void> {
    const started = Date.now();
    return this.save(file, key, options).then(
      () => logger?.info({ ms: Date.now() - started, file }, 'walk memory saved'),
      (err: unknown) => logger?.warn({ err, file }, 'could not save the walk memory'),
    );
  }

  /**
   * The memory saved in `file` under `key` for the companies `vids` (by internal offset), or
   * null when there is none, or it is of other data or another layout. With `vids` null, the
   * file must hold them (saved `withVids`). Lets requests in between its sections (each at
   * most some tens of MB at 1M companies).
   */
  static async load(file: string, key: string, known: readonly string[] | null): Promise<WalkMemory | null> {
    const r = SnapshotReader.open(file, savedKey(key));
    if (!r) return null;
    try {
      await r.readAhead();
      const head = r.json<SavedHead>();
      let vids = known;
      if (head.holdsVids) {
        const held = PackedStrings.readFrom(r);
        if (!held || held.length !== head.companies) return null;
        const inFile = await unpackedVids(held);
        vids ??= inFile;
      }
      if (!vids || head.companies !== vids.length || head.vids !== (await vidsDigest(vids))) return null;
      const read: Record<string, { readonly length: number }> = {};
      for (const [name, kind] of SAVED) {
        if (kind === 'strings') {
          const strings = PackedStrings.readFrom(r);
          if (!strings) return null;
          read[name] = strings;
        } else
          read[name] = kind === 'json' ? r.json<unknown[]>() : kind === 'bytes' ? r.bytes() : r.array(kind);
        await turn();
      }
      const into = { start: r.u32(), rels: r.u32() };
      const outOf = { start: r.u32(), rels: r.u32() };
      const offsets = OffsetIndex.fromSlots(vids, r.i32());
      const m = head.relationships;
      const lengths = { company: vids.length, twice: 2 * vids.length, rel: m, edges: m + 1 };
      const c = { vids, ...read } as unknown as Columns;
      const fits =
        r.done &&
        SAVED.every(([name, , per]) => per === 'any' || read[name]!.length === lengths[per]) &&
        c.edgeStart[m] === c.edgeText.length &&
        offsets !== null &&
        fitsAdjacency(into, vids.length, m) &&
        fitsAdjacency(outOf, vids.length, m);
      if (!fits) return null;
      c.lists.forEach((l) => Object.freeze(l));
      return new WalkMemory(c, { offsets, into, outOf });
    } finally {
      r.close();
    }
  }

  /**
   * The walk of GraphStore.walkTiers, company details included: every company
   * within `tiers` steps at its shortest distance over the relationships that pass the filters
   * (evidence date, confidence, the domicile of the company walked into), each tier cut to the
   * strongest `maxCompaniesPerTier` as walkBySteps does; then the relationships from each tier
   * into the next, tier by tier.
   */
  async walk(w: MemoryWalk, sink: TierWalkSink, signal?: AbortSignal): Promise<void> {
    const c = this.c;
    const { adj, far } = this.towards(w.direction);
    // Without a date every relationship passes, one without a date (NaN here) too.
    const from = w.evidenceFrom === null ? null : Date.parse(`${w.evidenceFrom}T00:00:00Z`);
    if (Number.isNaN(from)) throw new Error(`not a day: ${w.evidenceFrom}`);
    const minConfidence = w.minConfidence ?? null;
    // Relationships the walk may use: coalesce(confidence, 0) >= min, as the step query has it.
    const passes = (rel: number) =>
      (from === null || c.time[rel]! >= from) &&
      (minConfidence === null || (c.confidence[rel]! || 0) >= minConfidence);
    let enters: Uint8Array | null = null;
    if (w.countries) {
      enters = new Uint8Array(c.countries.length);
      const spellings = new Set(domicileSpellings(c.countries, w.countries));
      c.countries.forEach((v, id) => {
        if (v !== null && spellings.has(v)) enters![id] = 1;
      });
    }
    const cap = w.maxCompaniesPerTier ?? null;

    const tierOf = new Int8Array(c.vids.length).fill(-1);
    tierOf[w.rootOffset] = 0;
    const tiers: number[][] = [[w.rootOffset]];
    // Each company reached, made once and shared by its rows: made[slot[o]] (slot 0 is the root).
    const made: TierCompany[] = [w.root];
    const slot = new Int32Array(c.vids.length);
    const details = w.companyDetails !== false;
    const dropped: [number, number][] = [];
    // The rows from each tier into the next, as pairs (offset of the nearer company, relationship).
    // Without a cap the step that reaches a tier finds them: a relationship into a company first
    // reached in this step or earlier in it. A cap decides the tier only after its step.
    const rows: number[][] = [];
    let scanned = 0;
    for (let t = 1; t <= w.tiers; t++) {
      // The strongest relationship into each company reached, when a cap must rank them.
      const best = cap === null ? null : new Map<number, number>();
      const next: number[] = [];
      const into: number[] = [];
      for (const o of tiers[t - 1]!) {
        for (let k = adj.start[o]!, end = adj.start[o + 1]!; k < end; k++) {
          if (++scanned === WALK_SCAN_TURN) {
            scanned = 0;
            signal?.throwIfAborted();
            await turn();
          }
          const rel = adj.rels[k]!;
          const other = far[rel]!;
          if (!passes(rel) || (enters !== null && enters[c.country[other]!] !== 1)) continue;
          if (best !== null) {
            if (tierOf[other] !== -1 && !best.has(other)) continue;
            const known = best.get(other);
            if (known === undefined) {
              best.set(other, rel);
              tierOf[other] = LEFT_OUT;
              next.push(other);
            } else if (stronger(this.ranked(rel, other), this.ranked(known, other)) < 0) best.set(other, rel);
            continue;
          }
          const reached = tierOf[other];
          if (reached === -1) {
            tierOf[other] = t;
            next.push(other);
          } else if (reached !== t) continue;
          into.push(o, rel);
        }
      }
      let kept = next;
      if (best !== null && cap !== null) {
        if (next.length > cap) {
          const ranked = next.map((o) => ({ o, ...this.ranked(best.get(o)!, o) }));
          ranked.sort(stronger);
          kept = ranked.slice(0, cap).map((x) => x.o);
          dropped.push([t, next.length - cap]);
        }
        for (const o of kept) tierOf[o] = t;
      }
      if (kept.length === 0) break;
      tiers.push(kept);
      rows.push(
        best === null ? into : await this.rowsInto(tiers[t - 1]!, t, tierOf, adj, far, passes, signal),
      );
    }

    // The companies, root first, each made once and shared by its rows.
    await sink.companies([w.root]);
    for (const [t, count] of dropped) await sink.dropped?.(t, count);
    for (let t = 1; t < tiers.length; t++) {
      const list = tiers[t]!;
      for (let i = 0; i < list.length; i += BATCH) {
        signal?.throwIfAborted();
        const batch: TierCompany[] = [];
        for (let j = i; j < Math.min(i + BATCH, list.length); j++) {
          const o = list[j]!;
          const company = details ? this.company(o, t) : this.named(o, t);
          slot[o] = made.length;
          made.push(company);
          batch.push(company);
        }
        await sink.companies(batch);
        await turn();
      }
    }

    for (let t = 0; t < rows.length; t++) {
      const pairs = rows[t]!;
      let batch: TierRelationship[] = [];
      for (let i = 0; i < pairs.length; i += 2) {
        const rel = pairs[i + 1]!;
        const near = made[slot[pairs[i]!]!]!;
        const farCompany = made[slot[far[rel]!]!]!;
        batch.push(
          w.direction === 'suppliers'
            ? this.relationship(rel, farCompany, near)
            : this.relationship(rel, near, farCompany),
        );
        if (batch.length === BATCH) {
          signal?.throwIfAborted();
          await sink.relationships(t, batch);
          await turn();
          batch = [];
        }
      }
      if (batch.length > 0) await sink.relationships(t, batch);
    }
  }

  /** The rows from `near`, the companies of tier `t - 1`, into those `tierOf` puts in tier `t`. */
  private async rowsInto(
    near: readonly number[],
    t: number,
    tierOf: Int8Array,
    adj: Adjacency,
    far: Int32Array,
    passes: (rel: number) => boolean,
    signal?: AbortSignal,
  ): Promise<number[]> {
    const pairs: number[] = [];
    let scanned = 0;
    for (const o of near)
      for (let k = adj.start[o]!, end = adj.start[o + 1]!; k < end; k++) {
        if (++scanned === WALK_SCAN_TURN) {
          scanned = 0;
          signal?.throwIfAborted();
          await turn();
        }
        const rel = adj.rels[k]!;
        if (tierOf[far[rel]!] === t && passes(rel)) pairs.push(o, rel);
      }
    return pairs;
  }

  /** Company `o` as a per-tier cap ranks it when reached through `rel` (walkBySteps' `stronger`). */
  private ranked(rel: number, o: number): Ranked {
    const c = this.c;
    return {
      company: { vid: c.vids[o]! },
      confidence: c.confidence[rel]! || 0,
      date: isoOfTime(c.time[rel]!) ?? '',
    };
  }

  private company(o: number, tier: number): TierCompany {
    const c = this.c;
    const vid = c.vids[o]!;
    const industry = c.industries[c.industry[o]!]!;
    return toTierCompany(
      {
        vid,
        name: c.names.get(o) ?? '',
        company_legal_name: c.legalNames.get(o),
        cid_id: c.cids.get(o) ?? vid,
        domiciled_country: c.countries[c.country[o]!],
        websites: websitesOf(c.websites.get(o)),
        is_public: c.isPublic[o] === -1 ? null : c.isPublic[o] === 1,
        industry: industry[0],
        industry_code_system: industry[1],
        industry_code: industry[2],
        count_suppliers: c.counts[2 * o],
        count_customers: c.counts[2 * o + 1],
      },
      tier,
    );
  }

  /** Company `o` with only what every export row names (see TierWalkRequest.companyDetails). */
  private named(o: number, tier: number): TierCompany {
    const c = this.c;
    const vid = c.vids[o]!;
    return toTierCompany(
      {
        vid,
        name: c.names.get(o) ?? '',
        company_legal_name: c.legalNames.get(o),
        cid_id: c.cids.get(o) ?? vid,
      },
      tier,
    );
  }

  private relationship(rel: number, supplier: TierCompany, customer: TierCompany): TierRelationship {
    const c = this.c;
    const day = Math.floor(c.time[rel]! / DAY_MS);
    // A relationship without a date (NaN) has none in its row.
    let date: string | null | undefined = Number.isNaN(day) ? null : this.dayText.get(day);
    if (date === undefined) {
      date = new Date(day * DAY_MS).toISOString().slice(0, 10);
      this.dayText.set(day, date);
    }
    const confidence = c.confidence[rel]!;
    const status = c.status[rel]!;
    return tierRelationship(
      {
        edge_id: this.edgeId(rel),
        confidence_score: Number.isNaN(confidence) ? null : confidence,
        status_code: status === NO_STATUS ? null : status,
        hs_codes: c.lists[c.hs[rel]!]!,
        evidence_types: c.lists[c.types[rel]!]!,
        latest_evidence_date: date,
      },
      supplier,
      customer,
    );
  }
}

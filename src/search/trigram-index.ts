import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';
import { float4Ratio, trigramSet, trigramSetView } from '../domain/trigram';

/**
 * In-process candidate index for pg_trgm similarity search over many names: the documents whose
 * `similarity(query, name) >= threshold`, ranked, without scoring every name.
 *
 * Layout, typed arrays only (about 9 bytes per trigram occurrence of each distinct trigram set, 9 per
 * distinct set, 8 per document, 12 per distinct trigram):
 * - documents with the same trigram set share one row (a name held by many companies, or names that
 *   differ only in case and punctuation, is verified once per search);
 * - trigrams get a global rank, rarest first (fewest rows), ties by id;
 * - rows are numbered internally by trigram count, so a length is a contiguous internal range;
 * - rows: each distinct set's trigram ranks, ascending (so rarest first), concatenated in internal order;
 * - one posting list per trigram (CSR), ordered by (row length, position of the trigram in the row,
 *   internal number), with the positions kept in a parallel byte array.
 *
 * A document of n trigrams sharing c with a query of q scores float4(c / (q + n - c)). For each length n
 * the fewest shared trigrams that reach the bar is found by evaluating that float4 expression itself, so
 * rounding can neither drop nor admit a document wrongly. Candidates then come from l-prefix filtering
 * on both sides (see TrigramIndex.searchLength): for one length, a few slices of the query's rarest
 * posting lists, each cut by position with a binary search, so common trigrams such as "  c", " co" and
 * "co " are read only where they can still matter. Every candidate is verified by merging its row with
 * the query's ranks, so results are exact. Searches rank as they go and raise the bar to the worst of the
 * best offset + limit + 1 matches found so far, visiting lengths best-possible-score first; a first pass
 * with the bar at 0.5 fills the page for most long queries while reading few posting lists.
 */

/** One search result. */
export interface TrigramMatch {
  /** Document number returned by {@link TrigramIndexBuilder.add}. */
  doc: number;
  /** pg_trgm similarity as the exact JavaScript number of the float4 (see formatFloat4 for printing). */
  similarity: number;
}

/** Options of {@link TrigramIndex.search}. */
/** A query's trigrams and their ranks in the index (see TrigramIndex.prepare). */
export interface PreparedQuery {
  q: Uint32Array;
  ranks: Uint32Array;
}

export interface TrigramSearchOptions {
  /**
   * Minimum similarity in [0, 1], compared like PostgreSQL's `similarity(q, name) >= threshold` with a
   * numeric or double threshold: the float4 score, widened exactly, against the double threshold. So 0.7
   * does not match a score printed as 0.7 (0.699999988...); pass Math.fround(t) for float4 comparison.
   * 0 means "shares at least one trigram": scores of 0 are never returned.
   */
  threshold: number;
  /** Page size: at most this many matches are returned. */
  limit: number;
  /** Matches to skip, in ranking order. */
  offset: number;
  /** Tie-break by document (higher first) among equal similarities; missing entries count as 0. */
  weights?: Int32Array | Uint32Array | Float64Array;
  /**
   * Only documents it returns true for are matches. Called at most once per document per search, for
   * documents that reach the threshold; not for every such document once better ones fill the page.
   * It must not search the same index (that throws).
   */
  accept?: (doc: number) => boolean;
}

/** A page of matches and whether any match follows it. */
export interface TrigramSearchResult {
  matches: TrigramMatch[];
  hasMore: boolean;
}

/** Collects names; {@link build} turns them into an immutable {@link TrigramIndex}. Single use. */
export class TrigramIndexBuilder {
  private trigrams = new Uint32Array(1 << 12);
  private used = 0;
  private ends = new Uint32Array(1 << 10);
  private docs = 0;
  private built = false;

  /** Adds one document; returns its dense doc number (0, 1, 2, ... in call order). */
  add(name: string): number {
    if (this.built) throw new Error('TrigramIndexBuilder: add() after build()');
    const set = trigramSetView(name);
    if (this.used + set.length > this.trigrams.length) {
      this.trigrams = grow(this.trigrams, this.used + set.length, this.used);
    }
    this.trigrams.set(set, this.used);
    this.used += set.length;
    if (this.docs === this.ends.length) this.ends = grow(this.ends, this.docs + 1, this.docs);
    this.ends[this.docs] = this.used;
    return this.docs++;
  }

  /** Builds the index. The builder's buffers are released, so it cannot be used again. */
  build(): TrigramIndex {
    if (this.built) throw new Error('TrigramIndexBuilder: build() called twice');
    this.built = true;
    const size = this.docs;
    const trigrams = this.trigrams;
    const ends = this.ends;
    this.trigrams = new Uint32Array(0);
    this.ends = new Uint32Array(0);
    const startOf = (d: number): number => (d === 0 ? 0 : ends[d - 1]!);

    // Documents with the same trigram set (the same name, or names differing only in case or
    // punctuation) share one row: one verification scores them all, and the posting lists hold the row
    // once. Groups are numbered by their first document.
    const { groupOf, firstDoc } = groupSets(trigrams, ends, size);
    const groups = firstDoc.length;
    const lengthOf = (g: number): number => ends[firstDoc[g]!]! - startOf(firstDoc[g]!);
    // Where each group's trigrams end once one document's set per group is laid out in group order.
    const groupEnds = new Uint32Array(groups);
    for (let g = 0, at = 0; g < groups; g++) groupEnds[g] = at += lengthOf(g);
    const used = groups === 0 ? 0 : groupEnds[groups - 1]!;

    // Internal numbering of the groups: by trigram count, then by first doc (a stable counting sort).
    let maxLength = 0;
    for (let g = 0; g < groups; g++) maxLength = Math.max(maxLength, lengthOf(g));
    const lengthStart = new Uint32Array(maxLength + 2);
    for (let g = 0; g < groups; g++) lengthStart[lengthOf(g) + 1]!++;
    for (let n = 1; n < lengthStart.length; n++) lengthStart[n]! += lengthStart[n - 1]!;
    const groupAt = new Uint32Array(groups);
    const internalOfGroup = new Uint32Array(groups);
    const cursor = lengthStart.slice(0, maxLength + 1);
    for (let g = 0; g < groups; g++) {
      const i = cursor[lengthOf(g)]!++;
      groupAt[i] = g;
      internalOfGroup[g] = i;
    }
    // Each internal number's documents, ascending: members[memberStart[i], memberStart[i + 1]).
    const internalOf = new Uint32Array(size);
    const memberStart = new Uint32Array(groups + 1);
    for (let d = 0; d < size; d++) {
      const i = internalOfGroup[groupOf[d]!]!;
      internalOf[d] = i;
      memberStart[i + 1]!++;
    }
    for (let i = 1; i <= groups; i++) memberStart[i]! += memberStart[i - 1]!;
    const members = new Uint32Array(size);
    const memberFill = memberStart.slice(0, groups);
    for (let d = 0; d < size; d++) members[memberFill[internalOf[d]!]!++] = d;

    // The trigrams of one document per group, in group order, moved down in place: a group's first
    // document starts no earlier than the groups before it end once laid out, so no move overwrites
    // trigrams still to be moved.
    for (let g = 0; g < groups; g++) {
      const from = startOf(firstDoc[g]!);
      trigrams.copyWithin(groupEnds[g]! - lengthOf(g), from, from + lengthOf(g));
    }
    const groupTrigrams = trigrams.subarray(0, used);

    const { ids, df, table: rankTable } = distinctIds(groupTrigrams, used);
    const termCount = ids.length;
    let maxDf = 0;
    for (let t = 0; t < termCount; t++) maxDf = Math.max(maxDf, df[t]!);
    // Global order: rarest first, ties by id (a counting sort by df over ids already ascending).
    const dfStart = new Uint32Array(maxDf + 2);
    for (let t = 0; t < termCount; t++) dfStart[df[t]! + 1]!++;
    for (let f = 1; f < dfStart.length; f++) dfStart[f]! += dfStart[f - 1]!;
    const rankOfId = new Uint32Array(termCount);
    const listStart = new Uint32Array(termCount + 1);
    for (let t = 0; t < termCount; t++) {
      const rank = dfStart[df[t]!]!++;
      rankOfId[t] = rank;
      listStart[rank + 1] = df[t]!;
    }
    for (let r = 1; r <= termCount; r++) listStart[r]! += listStart[r - 1]!;
    // Rank by id: binary search for small indexes, a direct table over all 2^24 ids (64 MB while
    // building) when there are tens of millions of lookups to make. It is the table that counted the
    // ids: only the slots of ids present are read, and each is overwritten here.
    if (rankTable) for (let t = 0; t < termCount; t++) rankTable[ids[t]!] = rankOfId[t]!;
    const rankOf = (id: number): number => (rankTable ? rankTable[id]! : rankOfId[findId(ids, id)]!);

    // Each group's trigrams as global ranks, ascending, in internal order.
    const rows = new Uint32Array(used);
    const rowStart = new Uint32Array(groups + 1);
    for (let i = 0; i < groups; i++) {
      const g = groupAt[i]!;
      const from = g === 0 ? 0 : groupEnds[g - 1]!;
      const n = groupEnds[g]! - from;
      const at = rowStart[i]!;
      rowStart[i + 1] = at + n;
      for (let k = 0; k < n; k++) rows[at + k] = rankOf(groupTrigrams[from + k]!);
      sortRow(rows, at, at + n);
    }

    // Posting lists by rank, each ordered by (document length, position of the trigram in the document's
    // rarest-first row, internal number): the prefix of a length group is what prefix filtering reads.
    const postings = new Uint32Array(used);
    const postingPos = new Uint8Array(used);
    const fill = listStart.slice(0, termCount);
    for (let n = 1; n <= maxLength; n++) {
      const first = lengthStart[n]!;
      const last = lengthStart[n + 1]!;
      for (let pos = 0; pos < n; pos++) {
        const stored = Math.min(pos, MAX_POS);
        for (let i = first; i < last; i++) {
          const at = fill[rows[rowStart[i]! + pos]!]!++;
          postings[at] = i;
          postingPos[at] = stored;
        }
      }
    }
    return new TrigramIndex({
      ids,
      rankOfId,
      listStart,
      postings,
      postingPos,
      rows,
      rowStart,
      members,
      memberStart,
      internalOf,
      lengthStart,
    });
  }
}

/**
 * Numbers the distinct trigram sets among the documents' sets (trigrams[ends[d - 1], ends[d]) for doc d,
 * each ascending) in order of first occurrence: the group of every doc and the first doc of every group.
 */
function groupSets(
  trigrams: Uint32Array,
  ends: Uint32Array,
  size: number,
): { groupOf: Uint32Array; firstDoc: Uint32Array } {
  const startOf = (d: number): number => (d === 0 ? 0 : ends[d - 1]!);
  let slots = 16;
  while (slots < size * 2) slots *= 2;
  const mask = slots - 1;
  // Open addressing over group numbers + 1 (0 is empty), probed linearly from the set's hash.
  const table = new Uint32Array(slots);
  const groupOf = new Uint32Array(size);
  let firstDoc = new Uint32Array(Math.max(16, size >>> 2));
  let groups = 0;
  for (let d = 0; d < size; d++) {
    const from = startOf(d);
    const to = ends[d]!;
    let h = 0x811c9dc5 ^ (to - from);
    for (let k = from; k < to; k++) h = Math.imul(h ^ trigrams[k]!, 0x01000193);
    h ^= h >>> 15;
    let slot = h & mask;
    for (;;) {
      const entry = table[slot]!;
      if (entry === 0) {
        if (groups === firstDoc.length) firstDoc = grow(firstDoc, groups + 1, groups);
        firstDoc[groups] = d;
        table[slot] = ++groups;
        groupOf[d] = groups - 1;
        break;
      }
      const other = firstDoc[entry - 1]!;
      if (sameRange(trigrams, startOf(other), ends[other]!, from, to)) {
        groupOf[d] = entry - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  return { groupOf, firstDoc: firstDoc.slice(0, groups) };
}

function sameRange(arr: Uint32Array, aFrom: number, aTo: number, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let k = 0; k < aTo - aFrom; k++) if (arr[aFrom + k] !== arr[bFrom + k]) return false;
  return true;
}

/** Below this many trigram occurrences, building sorts ids instead of using tables over all 2^24 ids. */
const SMALL_BUILD = 1 << 20;

/**
 * Distinct trigram ids, ascending, and the number of documents having each; for a large build also the
 * table over all 2^24 ids that counted them, for the caller to reuse.
 */
function distinctIds(
  trigrams: Uint32Array,
  used: number,
): { ids: Uint32Array; df: Uint32Array; table?: Uint32Array } {
  if (used < SMALL_BUILD) {
    const sorted = trigrams.slice(0, used).sort();
    let count = 0;
    for (let k = 0; k < used; k++) if (k === 0 || sorted[k] !== sorted[k - 1]) count++;
    const ids = new Uint32Array(count);
    const df = new Uint32Array(count);
    let t = -1;
    for (let k = 0; k < used; k++) {
      if (k === 0 || sorted[k] !== sorted[k - 1]) ids[++t] = sorted[k]!;
      df[t]!++;
    }
    return { ids, df };
  }
  const table = new Uint32Array(1 << 24);
  for (let k = 0; k < used; k++) table[trigrams[k]!]!++;
  let count = 0;
  for (let id = 0; id < table.length; id++) if (table[id] !== 0) count++;
  const ids = new Uint32Array(count);
  const df = new Uint32Array(count);
  let t = 0;
  for (let id = 0; id < table.length; id++) {
    if (table[id] === 0) continue;
    ids[t] = id;
    df[t++] = table[id]!;
  }
  return { ids, df, table };
}

/**
 * Positions are stored in a byte; later positions are stored as this. A clamped position can only look
 * earlier than it is, which admits extra candidates that verification rejects, and never loses one.
 */
const MAX_POS = 255;

function sortRow(rows: Uint32Array, from: number, to: number): void {
  if (to - from > 32) {
    rows.subarray(from, to).sort();
    return;
  }
  // Insertion sort: rows are short, and a typed-array view per row would cost more than the sort.
  for (let k = from + 1; k < to; k++) {
    const v = rows[k]!;
    let j = k - 1;
    while (j >= from && rows[j]! > v) {
      rows[j + 1] = rows[j]!;
      j--;
    }
    rows[j + 1] = v;
  }
}

interface IndexArrays {
  /** Distinct trigram ids, ascending. */
  ids: Uint32Array;
  /** Global rank (rarest first, ties by id) of each id in `ids`. */
  rankOfId: Uint32Array;
  /** Posting list offsets by rank (ranks + 1 entries). */
  listStart: Uint32Array;
  /** Internal numbers, per list ordered by (length, position, internal number). */
  postings: Uint32Array;
  /** Position of the list's trigram in each posting's row, capped at MAX_POS. */
  postingPos: Uint8Array;
  /** Every document's trigram ranks, ascending, in internal order. */
  rows: Uint32Array;
  /** Row offsets by internal number (one more entry than there are rows). */
  rowStart: Uint32Array;
  /** The doc numbers of each internal number (docs with the same trigram set), ascending per number. */
  members: Uint32Array;
  /** Offsets into `members` by internal number (one more entry than there are rows). */
  memberStart: Uint32Array;
  /** Internal number (row) of each doc number. */
  internalOf: Uint32Array;
  /** First internal number of each trigram count n (maxLength + 2 entries). */
  lengthStart: Uint32Array;
}

/** The arrays of an index in the order a snapshot holds them. */
const ARRAY_KEYS = [
  'ids',
  'rankOfId',
  'listStart',
  'postings',
  'postingPos',
  'rows',
  'rowStart',
  'members',
  'memberStart',
  'internalOf',
  'lengthStart',
] as const satisfies readonly (keyof IndexArrays)[];

/** Immutable trigram index over the names given to a {@link TrigramIndexBuilder}. */
export class TrigramIndex {
  /** Number of documents. */
  readonly size: number;
  private readonly a: IndexArrays;
  private readonly maxLength: number;
  /** Times each internal number was seen by the running search (capped at 255); all 0 between searches. */
  private readonly hits: Uint8Array;
  private touched = new Uint32Array(1024);
  /** Where each posting list's rows of each length begin (see {@link lengthDirectory}). */
  private readonly byLength: LengthDirectory;
  /** Set while a search runs: `hits` and `touched` are shared, so `accept` must not search again. */
  private searching = false;

  /** Use {@link TrigramIndexBuilder.build}. */
  constructor(arrays: IndexArrays) {
    this.a = arrays;
    this.size = arrays.members.length;
    this.maxLength = arrays.lengthStart.length - 2;
    this.hits = new Uint8Array(this.rowCount);
    this.byLength = lengthDirectory(arrays);
  }

  /** Saves the index's arrays (see {@link TrigramIndex.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    for (const key of ARRAY_KEYS) w.array(this.a[key]);
  }

  /** An index saved by {@link TrigramIndex.writeTo}, its arrays viewed in place. */
  static readFrom(r: SnapshotReader): TrigramIndex {
    const a: Partial<Record<(typeof ARRAY_KEYS)[number], Uint32Array | Uint8Array>> = {};
    for (const key of ARRAY_KEYS) a[key] = key === 'postingPos' ? r.u8() : r.u32();
    return new TrigramIndex(a as unknown as IndexArrays);
  }

  /** Distinct trigram sets among the documents: the rows a search verifies. */
  get rowCount(): number {
    return this.a.rowStart.length - 1;
  }

  /** Bytes held by the index's arrays. */
  get byteLength(): number {
    const a = this.a;
    const arrays: ArrayBufferView[] = [
      a.ids,
      a.rankOfId,
      a.listStart,
      a.postings,
      a.postingPos,
      a.rows,
      a.rowStart,
      a.members,
      a.memberStart,
      a.internalOf,
      a.lengthStart,
      this.hits,
      this.touched,
      this.byLength.dirStart,
      this.byLength.shortest,
      this.byLength.dir,
    ];
    return arrays.reduce((bytes, arr) => bytes + arr.byteLength, 0);
  }

  /** Exact similarity of the query to one doc (for tests and for filter-first searches). */
  similarityTo(query: string, doc: number): number {
    return this.similarityWith(this.prepare(query), doc);
  }

  /** A query's trigrams looked up once, for similarityWith over many documents. */
  prepare(query: string): PreparedQuery {
    const q = trigramSet(query);
    return { q, ranks: this.queryRanks(q) };
  }

  /** similarity(query, name of `doc`) for a query prepared by `prepare`. */
  similarityWith(prepared: PreparedQuery, doc: number): number {
    return this.overlapWith(prepared, doc).similarity;
  }

  /**
   * similarity(query, name of `doc`), and how many of the query's trigrams the name has: divided by
   * the query's trigram count, an upper bound of word_similarity(query, name).
   */
  overlapWith({ q, ranks }: PreparedQuery, doc: number): { similarity: number; common: number } {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.size) throw new RangeError(`no document ${doc}`);
    const { rows, rowStart, internalOf } = this.a;
    const i = internalOf[doc]!;
    const from = rowStart[i]!;
    const n = rowStart[i + 1]! - from;
    if (q.length === 0 || n === 0) return { similarity: 0, common: 0 };
    const common = countCommon(ranks, rows, from, from + n, 0);
    return { similarity: float4Ratio(common, q.length + n - common), common };
  }

  /** How many distinct trigrams the name of `doc` has. */
  trigramCount(doc: number): number {
    const { rowStart, internalOf } = this.a;
    const i = internalOf[doc]!;
    return rowStart[i + 1]! - rowStart[i]!;
  }

  /**
   * Touches the rows of docs[0, count), which overlapWith reads, one step for all of them before the
   * next (doc to row, row to its first trigram): their cache misses overlap instead of coming one
   * after another. Returns a sum of what it read, for the caller to keep.
   */
  readAhead(docs: Uint32Array, count: number): number {
    const { rows, rowStart, internalOf } = this.a;
    const at =
      this.readAheadAt.length >= count ? this.readAheadAt : (this.readAheadAt = new Uint32Array(count));
    for (let k = 0; k < count; k++) at[k] = internalOf[docs[k]!]!;
    for (let k = 0; k < count; k++) at[k] = rowStart[at[k]!]!;
    let sum = 0;
    for (let k = 0; k < count; k++) sum += rows[at[k]!] ?? 0;
    return sum;
  }

  private readAheadAt = new Uint32Array(16);

  /**
   * Every doc with similarity(query, name) >= threshold that `accept(doc)` allows, ordered by similarity
   * desc, then weight desc, then doc asc; returns the slice [offset, offset + limit) of that order and
   * whether more matches follow it. A query without letters or digits has no trigrams and matches nothing.
   * The result is exactly what scoring every name with similarity() and sorting would give.
   */
  search(query: string, opts: TrigramSearchOptions): TrigramSearchResult {
    const { threshold, limit, offset, weights, accept } = opts;
    if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`threshold ${threshold} is not in [0, 1]`);
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`bad limit ${limit}`);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`bad offset ${offset}`);
    if (this.searching) throw new Error('TrigramIndex.search called from inside accept()');
    this.searching = true;
    try {
      return this.run(query, threshold, offset, limit, weights, accept);
    } finally {
      this.searching = false;
    }
  }

  private run(
    query: string,
    threshold: number,
    offset: number,
    limit: number,
    weights: TrigramSearchOptions['weights'],
    accept: TrigramSearchOptions['accept'],
  ): TrigramSearchResult {
    const q = trigramSet(query);
    const ql = q.length;
    const qr = this.queryRanks(q);
    if (qr.length === 0) return { matches: [], hasMore: false };
    const top = new TopMatches(offset + limit + 1, weights);
    // A first pass with a high floor reads few posting lists (a length then needs many shared trigrams);
    // where it fills the page, nothing below the floor can enter it. Otherwise the search runs again
    // from the threshold, offering only the docs scoring below the floor (the others were offered).
    if (threshold < FIRST_FLOOR) {
      this.pass(ql, qr, FIRST_FLOOR, Infinity, top, accept);
      if (!top.full()) this.pass(ql, qr, threshold, FIRST_FLOOR, top, accept);
    } else this.pass(ql, qr, threshold, Infinity, top, accept);
    return top.page(offset, limit);
  }

  /**
   * Offers to `top` every doc scoring at least `floor` and below `ceiling`. Once `top` is full, a doc must
   * score at least as well as the worst match it holds, so the bar rises from `floor` as good matches
   * turn up. Lengths are visited best-possible-score first (n = q, then outwards) so that it rises early.
   */
  private pass(
    ql: number,
    qr: Uint32Array,
    floor: number,
    ceiling: number,
    top: TopMatches,
    accept: ((doc: number) => boolean) | undefined,
  ): void {
    let bar = top.full() ? Math.max(floor, top.bar()) : floor;
    let below = Math.min(ql, this.maxLength);
    let above = ql + 1;
    for (;;) {
      const belowOk = below >= 1 && scoreAtLeast(below, ql, below, bar);
      const aboveOk = above <= this.maxLength && scoreAtLeast(ql, ql, above, bar);
      if (!belowOk && !aboveOk) break;
      // The side whose best possible score, min(q, n) / max(q, n), is higher.
      const n = belowOk && (!aboveOk || below * above >= ql * ql) ? below-- : above++;
      if (!belowOk) below = 0;
      if (!aboveOk) above = this.maxLength + 1;
      bar = this.searchLength(n, ql, qr, bar, ceiling, top, accept);
    }
  }

  /**
   * Offers every doc of n trigrams scoring >= bar and < ceiling to `top`; returns the raised bar. Candidates come from
   * l-prefix filtering on both sides: order trigrams rarest first; if a doc shares c >= l trigrams with
   * the query, its l rarest shared ones lie among the query's first known - c + l and among the doc's own
   * first n - c + l. So only those posting lists, and in them only those positions, are read, and a doc
   * must be seen at least l times there. l = 1 is classic prefix filtering; a larger l reads l - 1 more
   * lists and a little more of each, but drops the many docs that share only one or two common trigrams
   * with the query. l = min(c, 2 + c / 3) does best on the bench terms over a million generated names
   * (13% less time than 2 + c / 2, which was best before candidates' rows were read ahead of
   * verification and made a candidate cheaper) and on `bench/trigram-index.mjs`'s corpora.
   */
  private searchLength(
    n: number,
    ql: number,
    qr: Uint32Array,
    bar: number,
    ceiling: number,
    top: TopMatches,
    accept: ((doc: number) => boolean) | undefined,
  ): number {
    const { postings, postingPos, lengthStart, rows, rowStart, members, memberStart } = this.a;
    const { dirStart, shortest, dir } = this.byLength;
    const first = lengthStart[n]!;
    const last = lengthStart[n + 1]!;
    const known = qr.length;
    let need = minCommon(ql, n, bar);
    if (first === last || need > known) return bar;
    const ell = Math.min(need, 2 + Math.floor(need / 3));

    // Nothing below can throw, so `hits` is back to all zeros whenever this returns.
    const hits = this.hits;
    if (this.touched.length < last - first) this.touched = new Uint32Array(last - first);
    const touched = this.touched;
    let touchedCount = 0;
    for (let j = 0; j < known - need + ell; j++) {
      const rank = qr[j]!;
      const at = dirStart[rank]! + n - shortest[rank]!;
      // No row of this length in the list (the entry after the longest length is the list's end).
      if (n < shortest[rank]! || at + 1 >= dirStart[rank + 1]!) continue;
      const start = dir[at]!;
      const end = dir[at + 1]!;
      const stop = upperBoundByte(postingPos, start, end, n - need + ell - 1);
      // Counted from the length's first row: a length's counts stay within a few cache lines' reach.
      for (let p = start; p < stop; p++) {
        const i = postings[p]! - first;
        const h = hits[i]!;
        if (h === 0) touched[touchedCount++] = i;
        if (h < 255) hits[i] = h + 1;
      }
    }
    // Keep the docs seen often enough, compacted to the front of `touched`.
    let candidates = 0;
    for (let k = 0; k < touchedCount; k++) {
      const i = touched[k]!;
      if (hits[i]! >= ell) touched[candidates++] = i + first;
      hits[i] = 0;
    }

    // Exact verification; in internal order, so the rows are read front to back.
    touched.subarray(0, candidates).sort();
    // Touch every candidate's row before verifying any: the cache misses overlap instead of coming one
    // verification at a time.
    let sum = 0;
    for (let k = 0; k < candidates; k++) sum += rows[rowStart[touched[k]!]!]!;
    _prefetched = sum;
    for (let k = 0; k < candidates; k++) {
      const i = touched[k]!;
      const from = rowStart[i]!;
      const common = countCommon(qr, rows, from, from + n, need);
      if (common < need) continue;
      const score = float4Ratio(common, ql + n - common);
      if (score >= ceiling) continue;
      // Every document of the row scores the same; the bar can rise between them.
      const end = memberStart[i + 1]!;
      for (let m = memberStart[i]!; m < end; m++) {
        const doc = members[m]!;
        if (accept !== undefined && !accept(doc)) continue;
        if (top.offer(doc, score) && top.full() && top.bar() > bar) {
          bar = top.bar();
          need = minCommon(ql, n, bar);
        }
      }
    }
    return bar;
  }

  /** Ranks of the ids of `q` that occur in the index, ascending. */
  private queryRanks(q: Uint32Array): Uint32Array {
    const { ids, rankOfId } = this.a;
    const ranks = new Uint32Array(q.length);
    let known = 0;
    for (let j = 0; j < q.length; j++) {
      const t = findId(ids, q[j]!);
      if (t >= 0) ranks[known++] = rankOfId[t]!;
    }
    return ranks.subarray(0, known).sort();
  }
}

/**
 * Where each posting list's rows of each length begin. A list's postings are ordered by row length
 * first, so for list r holding lengths shortest[r] to L, dir[dirStart[r] + n - shortest[r]] is its first
 * posting whose row has n or more trigrams, for n up to L + 1 (that last entry is the list's end).
 * A search visits some thirty lengths and reads a few lists at each; one lookup per list and length
 * replaces two binary searches over long lists, whose first probes all miss the cache. Derived from the
 * saved arrays when an index is opened: about 0.7 MB at a million names.
 */
interface LengthDirectory {
  dirStart: Uint32Array;
  shortest: Uint32Array;
  dir: Uint32Array;
}

function lengthDirectory({ listStart, postings, lengthStart, rowStart }: IndexArrays): LengthDirectory {
  const lists = listStart.length - 1;
  const lengthOf = new Uint32Array(rowStart.length - 1);
  for (let n = 0; n + 1 < lengthStart.length; n++) lengthOf.fill(n, lengthStart[n], lengthStart[n + 1]);
  const dirStart = new Uint32Array(lists + 1);
  const shortest = new Uint32Array(lists);
  for (let r = 0; r < lists; r++) {
    const from = listStart[r]!;
    const to = listStart[r + 1]!;
    let entries = 0;
    if (to > from) {
      shortest[r] = lengthOf[postings[from]!]!;
      entries = lengthOf[postings[to - 1]!]! - shortest[r]! + 2;
    }
    dirStart[r + 1] = dirStart[r]! + entries;
  }
  const dir = new Uint32Array(dirStart[lists]!);
  for (let r = 0; r < lists; r++) {
    const to = listStart[r + 1]!;
    let at = dirStart[r]!;
    let n = shortest[r]!;
    for (let p = listStart[r]!; p < to; p++) {
      for (const length = lengthOf[postings[p]!]!; n <= length; n++) dir[at++] = p;
    }
    dir.fill(to, at, dirStart[r + 1]);
  }
  return { dirStart, shortest, dir };
}

/**
 * Size of the intersection of the ascending `query` with the ascending rows[from, to). Gives up early, with
 * some count below `need`, once `need` is out of reach; pass 0 to always count exactly.
 */
function countCommon(query: Uint32Array, rows: Uint32Array, from: number, to: number, need: number): number {
  let j = 0;
  let k = from;
  let common = 0;
  const ql = query.length;
  while (j < ql && k < to) {
    if (common + Math.min(ql - j, to - k) < need) return common;
    const x = query[j]!;
    const y = rows[k]!;
    if (x === y) {
      common++;
      j++;
      k++;
    } else if (x < y) j++;
    else k++;
  }
  return common;
}

/** Position of a trigram id in `ids`, or -1 when no document has it. */
function findId(ids: Uint32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = ids[mid]!;
    if (v < id) lo = mid + 1;
    else if (v > id) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/** First position in [from, to) of the ascending `arr` whose value is > value (to when none). */
function upperBoundByte(arr: Uint8Array, from: number, to: number, value: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function grow(arr: Uint32Array, needed: number, keep: number): Uint32Array<ArrayBuffer> {
  const next = new Uint32Array(Math.max(needed, arr.length * 2, 16));
  next.set(arr.subarray(0, keep));
  return next;
}

/** The sum of the rows' first values read ahead, kept so that reading them is not optimised away. */
let _prefetched = 0;

/** Floor of a search's first pass (see TrigramIndex.run). */
const FIRST_FLOOR = 0.5;

/** Whether c shared trigrams between a query of q and a doc of n trigrams score >= bar (and > 0). */
function scoreAtLeast(c: number, q: number, n: number, bar: number): boolean {
  return c > 0 && float4Ratio(c, q + n - c) >= bar;
}

/**
 * Fewest shared trigrams with which a doc of n trigrams scores >= bar against a query of q trigrams, found
 * by evaluating the float4 score itself around the real-number bound, so rounding cannot mislead it.
 * Returns min(q, n) + 1 when no count suffices.
 */
function minCommon(q: number, n: number, bar: number): number {
  const most = Math.min(q, n);
  if (!scoreAtLeast(most, q, n, bar)) return most + 1;
  let c = Math.min(most, Math.max(1, Math.ceil((bar * (q + n)) / (1 + bar))));
  while (c > 1 && scoreAtLeast(c - 1, q, n, bar)) c--;
  while (!scoreAtLeast(c, q, n, bar)) c++;
  return c;
}

/**
 * The best `capacity` matches seen so far, in a binary heap whose root is the one ranking last, so a
 * fragment matching half the index costs one comparison per match rather than a sort of all of them.
 */
class TopMatches {
  private readonly docs: number[] = [];
  private readonly scores: number[] = [];

  constructor(
    private readonly capacity: number,
    private readonly weights: Int32Array | Uint32Array | Float64Array | undefined,
  ) {}

  full(): boolean {
    return this.docs.length === this.capacity;
  }

  /**
   * The least a doc must score to enter once full: the score of the match ranking last, which another
   * can still beat by weight.
   */
  bar(): number {
    return this.scores[0]!;
  }

  /** Keeps the match if it ranks among the best `capacity`; returns whether it was kept. */
  offer(doc: number, score: number): boolean {
    const docs = this.docs;
    const scores = this.scores;
    if (docs.length < this.capacity) {
      docs.push(doc);
      scores.push(score);
      this.siftUp(docs.length - 1);
      return true;
    }
    if (this.capacity === 0 || this.after(doc, score, docs[0]!, scores[0]!) >= 0) return false;
    docs[0] = doc;
    scores[0] = score;
    this.siftDown(0);
    return true;
  }

  /** Matches [offset, offset + limit) of the ranking; more exist when the heap is full. */
  page(offset: number, limit: number): TrigramSearchResult {
    const order = Array.from(this.docs.keys()).sort((x, y) =>
      this.after(this.docs[x]!, this.scores[x]!, this.docs[y]!, this.scores[y]!),
    );
    const matches = order
      .slice(offset, offset + limit)
      .map((k) => ({ doc: this.docs[k]!, similarity: this.scores[k]! }));
    return { matches, hasMore: this.docs.length > offset + limit };
  }

  private weightOf(doc: number): number {
    const w = this.weights;
    return w !== undefined && doc < w.length ? w[doc]! : 0;
  }

  /** Positive when (docA, scoreA) ranks after (docB, scoreB). Weights are compared, not subtracted, so
   * infinite weights cannot produce NaN. */
  private after(docA: number, scoreA: number, docB: number, scoreB: number): number {
    if (scoreA !== scoreB) return scoreB - scoreA;
    const wa = this.weightOf(docA);
    const wb = this.weightOf(docB);
    if (wa !== wb) return wb > wa ? 1 : -1;
    return docA - docB;
  }

  private ranksAfter(x: number, y: number): boolean {
    return this.after(this.docs[x]!, this.scores[x]!, this.docs[y]!, this.scores[y]!) > 0;
  }

  private swap(x: number, y: number): void {
    const docs = this.docs;
    const scores = this.scores;
    [docs[x], docs[y]] = [docs[y]!, docs[x]!];
    [scores[x], scores[y]] = [scores[y]!, scores[x]!];
  }

  private siftUp(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >>> 1;
      if (!this.ranksAfter(at, parent)) return;
      this.swap(at, parent);
      at = parent;
    }
  }

  private siftDown(at: number): void {
    const size = this.docs.length;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) return;
      const worse = left + 1 < size && this.ranksAfter(left + 1, left) ? left + 1 : left;
      if (!this.ranksAfter(worse, at)) return;
      this.swap(at, worse);
      at = worse;
    }
  }
}

import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';
import type { WordIndex } from './word-index';

/**
 * The postings of every word ordered by how high a name holding it can rank, so that a relevance
 * search reads a word's names best first and stops once no name left can enter its page.
 *
 * Relevance (see relevance.ts) has parts that depend on the query and parts that a name holds alone.
 * Each posting is given the latter as its key:
 *
 *   key = 0.3 * importance + 0.05 / (the name's significant words) + 0.025 if the word is its first
 *
 * which is the importance part, the precision part for one query word met, and the first-word part.
 * What is left depends on the query: the word-match part, which the reader knows per word it reads,
 * and similarity to the company's name, which is at most min(q, n) / max(q, n) for a query of q
 * trigrams and a name of n. So each list is cut into bands of the name's trigram count (BANDS), each
 * band in key order: a band's similarity bound is known once the query is, and within it the key
 * falls as the list is read. Lists of SHORT postings or fewer are one band, in key order.
 *
 * Made with the rest of the search index and saved with it (about a second at a million companies,
 * 5 million postings): 9 bytes per posting.
 */
export class BoundLists {
  /** Lists laid out as {@link BoundLists.build} lays them out (see packPosting and unpackPostings); PairLists makes its own. */
  constructor(
    /** Entries of each word's list, in the word index's posting layout (see WordIndex.postingRange). */
    readonly entries: Uint32Array,
    /** Each posting's key in units of KEY_UNIT, rounded up. */
    readonly keys: Uint32Array,
    /** Each posting's band (0 in lists of SHORT postings or fewer). */
    readonly bands: Uint8Array,
  ) {}

  /**
   * `turn` is awaited between stretches of the build (about a second in all at a million companies),
   * so that a rebuild beside serving lets requests run.
   */
  static async build(
    words: WordIndex,
    /** Trigram count of a company's name. */
    trigramsOf: (doc: number) => number,
    /** The importance part of relevance, in [0, 1], of a company. */
    importanceOf: (doc: number) => number,
    turn: () => Promise<void> = () => Promise.resolve(),
  ): Promise<BoundLists> {
    const { entryDoc, wordStart, entryWords } = words;
    const entryCount = entryDoc.length;
    if (entryCount >= ENTRY_LIMIT) throw new RangeError(`too many names for bound lists: ${entryCount}`);
    // Per entry: the key without the first-word part, and its first significant word.
    const base = new Float64Array(entryCount);
    const firstWord = new Int32Array(entryCount).fill(-1);
    const band = new Uint8Array(entryCount);
    // Names made only of legal forms, which a query word meets through them (see matchEntry).
    const legalOnly = new Uint8Array(entryCount);
    for (let e = 0; e < entryCount; e++) {
      if ((e & STRETCH) === 0) await turn();
      let considered = 0;
      let first = -1;
      for (let k = wordStart[e]!; k < wordStart[e + 1]!; k++) {
        if (words.isLegal(entryWords[k]!)) continue;
        considered++;
        if (first < 0) first = entryWords[k]!;
      }
      if (considered === 0) {
        legalOnly[e] = 1;
        considered = wordStart[e + 1]! - wordStart[e]!;
        first = considered > 0 ? entryWords[wordStart[e]!]! : -1;
      }
      const doc = entryDoc[e]!;
      base[e] = 0.3 * importanceOf(doc) + (considered > 0 ? 0.05 / considered : 0);
      firstWord[e] = first;
      band[e] = bandOf(trigramsOf(doc));
    }
    const total = words.postingCount;
    const entries = new Uint32Array(total);
    const keys = new Uint32Array(total);
    const bands = new Uint8Array(total);
    // Sorted as one number each: band, then key descending, then entry (exact below 2^52).
    let packed = new Float64Array(64);
    let sinceTurn = 0;
    for (let v = 0; v < words.vocabularySize; v++) {
      const [from, to] = words.postingRange(v);
      sinceTurn += to - from;
      if (sinceTurn > STRETCH) {
        sinceTurn = 0;
        await turn();
      }
      const m = to - from;
      if (m === 0) continue;
      if (packed.length < m) packed = new Float64Array(2 * m);
      const list = words.postingsOf(v);
      const legal = words.isLegal(v);
      for (let k = 0; k < m; k++) {
        const e = list[k]!;
        const b = legal && !legalOnly[e] ? UNREAD : m <= SHORT ? 0 : band[e]!;
        packed[k] = packPosting(b, base[e]! + (firstWord[e] === v ? 0.025 : 0), e);
      }
      unpackPostings(packed.subarray(0, m).sort(), from, entries, keys, bands);
    }
    return new BoundLists(entries, keys, bands);
  }

  /** Saves the lists (see {@link BoundLists.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.array(this.entries).array(this.keys).array(this.bands);
  }

  /** Lists saved by {@link BoundLists.writeTo}, viewed in place. */
  static readFrom(r: SnapshotReader): BoundLists {
    return new BoundLists(r.u32(), r.u32(), r.u8());
  }
}

/** Least trigram count of a name in each band; the last band is open above. */
export const BANDS: readonly number[] = [0, 8, 11, 14, 17, 21, 26, 32, 40, 50, 64];
/**
 * The band, last in its list, of a legal form's postings in names that have other words: a query word
 * meets a legal form only in a name made of nothing else, so these are never read.
 */
const UNREAD = BANDS.length;

/** The band of a name of `trigrams` trigrams. */
export function bandOf(trigrams: number): number {
  let b = 0;
  while (b + 1 < BANDS.length && trigrams >= BANDS[b + 1]!) b++;
  return b;
}

/**
 * The highest similarity a query of `q` trigrams can have with a name in band `b` (with a margin for
 * float4 rounding); `b` -1 for a list of one band.
 */
export function bandSimilarityBound(b: number, q: number): number {
  if (b < 0) return 1;
  const lo = BANDS[b]!;
  const hi = b + 1 < BANDS.length ? BANDS[b + 1]! - 1 : Infinity;
  // Highest for the name of the band nearest the query's size.
  return similarityBound(q, Math.min(Math.max(q, lo), hi));
}

/**
 * The highest similarity a query of `q` trigrams can have with a name of `n` (the overlap is at most
 * the smaller set), with a margin for float4 rounding.
 */
export function similarityBound(q: number, n: number): number {
  if (q === 0 || n === 0) return 0;
  return Math.min(1, Math.min(q, n) / Math.max(q, n) + 1e-6);
}

/**
 * One posting of a list as a number that sorts in the lists' order: band, then key descending, then
 * entry. The key is rounded up to KEY_UNIT, with a margin for the sums of a relevance; `band` is the
 * posting's band, 0 in a list of SHORT postings or fewer.
 */
export function packPosting(band: number, key: number, entry: number): number {
  if (entry >= ENTRY_LIMIT) throw new RangeError(`too many names for bound lists: entry ${entry}`);
  const units = Math.min(KEY_UNITS - 1, Math.ceil((key + 1e-9) * KEY_SCALE));
  return band * BAND_STEP + (KEY_UNITS - 1 - units) * ENTRY_LIMIT + entry;
}

/** Writes the sorted packed postings of one list into the lists' arrays from `at` on. */
export function unpackPostings(
  sorted: Float64Array,
  at: number,
  entries: Uint32Array,
  keys: Uint32Array,
  bands: Uint8Array,
): void {
  for (let k = 0; k < sorted.length; k++) {
    const value = sorted[k]!;
    const b = Math.floor(value / BAND_STEP);
    const rest = value - b * BAND_STEP;
    entries[at + k] = rest % ENTRY_LIMIT;
    keys[at + k] = KEY_UNITS - 1 - Math.floor(rest / ENTRY_LIMIT);
    bands[at + k] = b;
  }
}

/** Lists this short are one band. */
export const SHORT = 8;

/** Entries or postings handled between two turns of a build. */
const STRETCH = 0x3ffff;
/** Keys are kept in units of 2^-21 (keys are below 0.5, so below 2^20 units). */
const KEY_SCALE = 2 ** 21;
const KEY_UNIT = 1 / KEY_SCALE;
const KEY_UNITS = 2 ** 20;
/** Entries are numbered below 2^28 here; with the key's 20 bits and the band's 4 (up to UNREAD), 52 bits. */
const ENTRY_LIMIT = 2 ** 28;
const BAND_STEP = KEY_UNITS * ENTRY_LIMIT;

/**
 * Reads the lists of some words together, best bound first: each list is read band by band, and a
 * heap of the bands' next postings gives the one whose bound is highest. A posting's bound is
 * `weight * score + key + 0.1 * the band's similarity bound + constant`, where `score` is the word
 * match the word gives the query (see relevance.ts): the highest relevance its company can have
 * through that word, as long as `weight` and `constant` cover what the key does not.
 */
export class BoundReader {
  private readonly pos: number[] = [];
  private readonly end: number[] = [];
  private readonly fixed: number[] = [];
  private heap: number[] = [];

  /** `rangeOf(id)`: where the list of `id` (a word, or a pair of them) lies in `lists`. */
  constructor(
    private readonly lists: BoundLists,
    private readonly rangeOf: (id: number) => readonly [number, number],
  ) {}

  /**
   * Starts a read of the lists of `readings` (list id to word-match score) for a query of `tq`
   * trigrams; false when they hold more than `maxBands` bands (the read is then not started).
   */
  start(
    readings: Map<number, number>,
    weight: number,
    constant: number,
    tq: number,
    maxBands: number,
  ): boolean {
    const { pos, end, fixed } = this;
    const bands = this.lists.bands;
    // A read not started leaves nothing of the last one to give.
    pos.length = end.length = fixed.length = this.heap.length = 0;
    const add = (at: number, stop: number, score: number, band: number) => {
      pos.push(at);
      end.push(stop);
      fixed.push(weight * score + 0.1 * bandSimilarityBound(band, tq) + constant);
    };
    for (const [id, score] of readings) {
      const [start, stop] = this.rangeOf(id);
      if (stop - start <= SHORT) {
        let end = start;
        while (end < stop && bands[end] !== UNREAD) end++;
        if (end > start) add(start, end, score, -1);
        continue;
      }
      for (let at = start; at < stop;) {
        const band = bands[at]!;
        if (band === UNREAD) break;
        let lo = at + 1;
        let hi = stop;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (bands[mid]! === band) lo = mid + 1;
          else hi = mid;
        }
        add(at, lo, score, band);
        at = lo;
      }
      if (pos.length > maxBands) return false;
    }
    this.heap = Array.from(pos.keys()).sort((a, b) => this.head(b) - this.head(a));
    return true;
  }

  /** The bound of the next posting; -Infinity once every list is read. */
  peek(): number {
    return this.heap.length > 0 ? this.head(this.heap[0]!) : -Infinity;
  }

  /** The entry of the next posting, read; -1 once every list is read. */
  next(): number {
    const heap = this.heap;
    if (heap.length === 0) return -1;
    const cur = heap[0]!;
    const entry = this.lists.entries[this.pos[cur]!]!;
    if (++this.pos[cur]! >= this.end[cur]!) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    if (heap.length > 1) this.down();
    return entry;
  }

  private head(cur: number): number {
    return this.lists.keys[this.pos[cur]!]! * KEY_UNIT + this.fixed[cur]!;
  }

  private down(): void {
    const heap = this.heap;
    const item = heap[0]!;
    const value = this.head(item);
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && this.head(heap[child + 1]!) > this.head(heap[child]!)) child++;
      if (this.head(heap[child]!) <= value) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = item;
  }
}

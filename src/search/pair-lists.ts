import { lowerBound } from '../store/bisect';
import type { SnapshotReader, SnapshotWriter } from '../store/snapshot';
import { BoundLists, SHORT, bandOf, packPosting, unpackPostings } from './bound-lists';
import type { WordIndex } from './word-index';

/**
 * For every two significant words that some name, alias or acronym holds together, the names holding
 * both, in the order of how high such a name can rank for a query of those two words: the layout of
 * {@link BoundLists}, with the parts a name holds alone for two query words met as the key:
 *
 *   key = 0.3 * importance + 0.1 / (the name's significant words) + 0.025 if either word is its first
 *
 * (the importance part, the precision part for two words met, the first-word part). A search of two
 * words reads these lists, for each reading of the first word with each of the second, for the names
 * meeting both; the one-word lists give the names meeting one (see CompanySearchIndex.searchTwoWords).
 *
 * Pairs are of distinct vocabulary ids, the smaller first, listed in ascending order of (first,
 * second). Made with the rest of the search index and saved with it: at a million companies some 80,000
 * pairs and 3.6 million postings, 9 bytes each.
 */
export class PairLists {
  private constructor(
    private readonly first: Uint32Array,
    private readonly second: Uint32Array,
    /** Postings of pair k: lists' [start[k], start[k + 1]). */
    private readonly start: Uint32Array,
    readonly lists: BoundLists,
  ) {}

  /**
   * `turn` is awaited between stretches of the build (a second or two in all at a million
   * companies), so that a rebuild beside serving lets requests run.
   */
  static async build(
    words: WordIndex,
    /** Trigram count of a company's name. */
    trigramsOf: (doc: number) => number,
    /** The importance part of relevance, in [0, 1], of a company. */
    importanceOf: (doc: number) => number,
    turn: () => Promise<void> = () => Promise.resolve(),
  ): Promise<PairLists> {
    const { entryDoc } = words;
    const entryCount = entryDoc.length;
    const vocabulary = words.vocabularySize;
    const ids: number[] = [];
    // Each entry's distinct significant words, and what its postings' keys are made of.
    const pairsOf = (e: number, each: (a: number, b: number) => void) => {
      let m = words.significantOf(e, ids);
      let kept = 0;
      for (let i = 0; i < m; i++) if (ids.indexOf(ids[i]!) === i) ids[kept++] = ids[i]!;
      m = kept;
      for (let i = 0; i < m; i++)
        for (let j = i + 1; j < m; j++) {
          const a = ids[i]!;
          const b = ids[j]!;
          if (a < b) each(a, b);
          else each(b, a);
        }
    };
    // Every posting's pair as one number (first * vocabulary + second), in the order the entries give
    // them; the distinct ones, sorted, number the pairs. Typed arrays rather than a Set or Map, whose
    // size V8 caps at 2^24: the names of real companies hold distinct pairs by the million.
    let total = 0;
    for (let e = 0; e < entryCount; e++) {
      if ((e & STRETCH) === 0) await turn();
      pairsOf(e, () => total++);
    }
    const pairOf = new Float64Array(total);
    let at = 0;
    for (let e = 0; e < entryCount; e++) {
      if ((e & STRETCH) === 0) await turn();
      pairsOf(e, (a, b) => (pairOf[at++] = a * vocabulary + b));
    }
    const sortedKeys = distinctSorted(pairOf);
    await turn();
    const first = new Uint32Array(sortedKeys.length);
    const second = new Uint32Array(sortedKeys.length);
    for (let k = 0; k < sortedKeys.length; k++) {
      first[k] = Math.floor(sortedKeys[k]! / vocabulary);
      second[k] = sortedKeys[k]! - first[k]! * vocabulary;
    }
    // Each posting's pair, numbered.
    const pairIndex = new Uint32Array(total);
    const start = new Uint32Array(sortedKeys.length + 1);
    for (let i = 0; i < total; i++) {
      if ((i & STRETCH) === 0) await turn();
      const k = lowerBound(sortedKeys, pairOf[i]!);
      pairIndex[i] = k;
      start[k + 1]!++;
    }
    for (let k = 0; k < sortedKeys.length; k++) start[k + 1]! += start[k]!;
    // The postings, packed as BoundLists sorts them, into the pair keys' array (no longer needed).
    const packed = pairOf;
    const filled = start.slice(0, sortedKeys.length);
    at = 0;
    for (let e = 0; e < entryCount; e++) {
      if ((e & STRETCH) === 0) await turn();
      const doc = entryDoc[e]!;
      const m = words.significantOf(e, ids);
      const firstWord = m > 0 ? ids[0]! : -1;
      const base = 0.3 * importanceOf(doc) + (m > 0 ? 0.1 / m : 0);
      const band = bandOf(trigramsOf(doc));
      pairsOf(e, (a, b) => {
        const k = pairIndex[at++]!;
        const key = base + (a === firstWord || b === firstWord ? 0.025 : 0);
        const short = start[k + 1]! - start[k]! <= SHORT;
        packed[filled[k]!++] = packPosting(short ? 0 : band, key, e);
      });
    }
    const entries = new Uint32Array(total);
    const keys = new Uint32Array(total);
    const bands = new Uint8Array(total);
    for (let k = 0; k < sortedKeys.length; k++) {
      if ((k & 0xffff) === 0) await turn();
      const from = start[k]!;
      unpackPostings(packed.subarray(from, start[k + 1]).sort(), from, entries, keys, bands);
    }
    return new PairLists(first, second, start, new BoundLists(entries, keys, bands));
  }

  /** The pair of vocabulary ids `a` and `b` (in either order), or -1 when no name holds both. */
  indexOf(a: number, b: number): number {
    if (a === b) return -1;
    const x = Math.min(a, b);
    const y = Math.max(a, b);
    const { first, second } = this;
    let lo = 0;
    let hi = first.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (first[mid]! < x || (first[mid] === x && second[mid]! < y)) lo = mid + 1;
      else hi = mid;
    }
    return lo < first.length && first[lo] === x && second[lo] === y ? lo : -1;
  }

  /** Where the postings of pair `k` lie in `lists`. */
  rangeOf(k: number): readonly [number, number] {
    return [this.start[k]!, this.start[k + 1]!];
  }

  /** How many pairs are listed. */
  get size(): number {
    return this.first.length;
  }

  /** Saves the lists (see {@link PairLists.readFrom}). */
  writeTo(w: SnapshotWriter): void {
    w.array(this.first).array(this.second).array(this.start);
    this.lists.writeTo(w);
  }

  /** Lists saved by {@link PairLists.writeTo}, viewed in place. */
  static readFrom(r: SnapshotReader): PairLists {
    const first = r.u32();
    const second = r.u32();
    const start = r.u32();
    return new PairLists(first, second, start, BoundLists.readFrom(r));
  }
}

/** The distinct values of `values`, ascending (`values` is left as it was). */
function distinctSorted(values: Float64Array): Float64Array {
  const sorted = values.slice().sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++)
    if (n === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i]!;
  return sorted.slice(0, n);
}

/** Entries or postings handled between two turns of a build. */
const STRETCH = 0x3ffff;

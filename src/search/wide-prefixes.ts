import type { WordIndex } from './word-index';

/**
 * Where a scan for one word beginning may start: the companies it would take first, and the place in
 * importance order after the last of them.
 */
export interface KeptScan {
  /** The first companies, most important first, with a word in the beginning's range. */
  docs: Uint32Array;
  /** Place in importance order from which the scan goes on once `docs` are spent. */
  resumeAt: number;
}

export interface WidePrefixOptions {
  /** A beginning is wide when more vocabulary words than this share it. */
  minWords: number;
  /** Companies a scan reads at most, most important first. */
  scanLimit: number;
  /** Companies kept per beginning. */
  keep: number;
}

/**
 * The first companies, in importance order, holding a word that begins with a short beginning shared by
 * many vocabulary words ("s", "co"). A typed last word such as "x" is matched by reading companies most
 * important first until enough hold a word it begins; when few of them do, that read went through tens
 * of thousands of companies for every such query (about 8 ms at a million companies). These lists are
 * that read done once, when the index is opened, for every wide beginning: a scan takes their companies
 * in the same order and goes on from `resumeAt` only when it needs more, so its answer is the same.
 * Tens of kilobytes at a million companies.
 */
export class WidePrefixes {
  private constructor(
    private readonly kept: Map<number, KeptScan>,
    private readonly span: number,
  ) {}

  static build(words: WordIndex, byDegree: Uint32Array, o: WidePrefixOptions): WidePrefixes {
    if (!(o.minWords >= 1 && o.keep >= 1)) throw new RangeError('minWords and keep must be at least 1');
    const span = words.vocabularySize + 1;
    const ranges = words.wideRanges(o.minWords);
    // Per vocabulary id, the wide ranges holding it (a few at most: they nest), as a CSR.
    const holdStart = new Uint32Array(span);
    for (const [from, to] of ranges) for (let id = from; id < to; id++) holdStart[id + 1]!++;
    for (let id = 1; id < span; id++) holdStart[id]! += holdStart[id - 1]!;
    const holds = new Uint32Array(holdStart[span - 1]!);
    const fill = holdStart.slice(0, span - 1);
    ranges.forEach(([from, to], r) => {
      for (let id = from; id < to; id++) holds[fill[id]!++] = r;
    });

    const { wordStart, entryWords } = words;
    const scanned = Math.min(byDegree.length, o.scanLimit);
    const docs = ranges.map(() => new Uint32Array(o.keep));
    const count = new Uint32Array(ranges.length);
    // Until a range is full, a scan for it would read the whole of the scanned companies.
    const resumeAt = new Uint32Array(ranges.length).fill(scanned);
    const lastDoc = new Int32Array(ranges.length).fill(-1);
    let open = ranges.length;
    for (let k = 0; k < scanned && open > 0; k++) {
      const doc = byDegree[k]!;
      const [first, end] = words.entriesOf(doc);
      for (let w = wordStart[first]!; w < wordStart[end]!; w++) {
        const id = entryWords[w]!;
        for (let j = holdStart[id]!; j < holdStart[id + 1]!; j++) {
          const r = holds[j]!;
          if (lastDoc[r] === doc || count[r]! >= o.keep) continue;
          lastDoc[r] = doc;
          docs[r]![count[r]!++] = doc;
          if (count[r] === o.keep) {
            resumeAt[r] = k + 1;
            open--;
          }
        }
      }
    }
    const kept = new Map<number, KeptScan>();
    ranges.forEach(([from, to], r) => {
      kept.set(from * span + to, { docs: docs[r]!.slice(0, count[r]), resumeAt: resumeAt[r]! });
    });
    return new WidePrefixes(kept, span);
  }

  /** The kept start of a scan for the vocabulary words [from, to); undefined for a range not kept. */
  get(from: number, to: number): KeptScan | undefined {
    return this.kept.get(from * this.span + to);
  }

  /** Beginnings kept. */
  get size(): number {
    return this.kept.size;
  }
}

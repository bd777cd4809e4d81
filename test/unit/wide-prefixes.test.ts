import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import { WidePrefixes } from '../../src/search/wide-prefixes';
import { WordIndex } from '../../src/search/word-index';
import type { SearchRow } from '../../src/domain/search-row';
import { buildSearchRow } from '../support/factories';

/** A word of letters only, `first` then n written in base 26 with letters, distinct for each n. */
const wordOf = (first: string, n: number) =>
  first + [...n.toString(26)].map((d) => String.fromCharCode(97 + parseInt(d, 26))).join('');

/** The docs of the first `limit` in importance order that hold a word in [from, to), as places k. */
function holders(words: WordIndex, byDegree: Uint32Array, limit: number, from: number, to: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < Math.min(limit, byDegree.length); k++) {
    const [first, end] = words.entriesOf(byDegree[k]!);
    let holds = false;
    for (let w = words.wordStart[first]!; w < words.wordStart[end]!; w++) {
      const id = words.entryWords[w]!;
      if (id >= from && id < to) holds = true;
    }
    if (holds) out.push(k);
  }
  return out;
}

describe('WidePrefixes', () => {
  // 80 companies over a small vocabulary; importance order is not doc order. Words beginning with "e"
  // belong only to companies beyond the scanned 60.
  const rank = Uint32Array.from({ length: 80 }, (_, doc) => (doc * 37) % 80);
  const names = Array.from({ length: 80 }, (_, doc) => [
    `${wordOf('b', doc % 7)} ${wordOf('ca', doc % 11)} ${doc % 3 === 0 ? wordOf('cb', doc) : 'dd'}` +
      (rank[doc]! >= 60 ? ` ${wordOf('e', doc)}` : ''),
  ]);
  const byDegree = Uint32Array.from(rank.keys()).sort((a, b) => rank[a]! - rank[b]!);

  it('keeps, for every beginning more than minWords words share, the companies a scan takes first', async () => {
    const words = await WordIndex.build(names, rank);
    const o = { minWords: 3, scanLimit: 60, keep: 4 };
    const wide = WidePrefixes.build(words, byDegree, o);

    // Every beginning of every vocabulary word, checked against the scan done the long way.
    const seen = new Set<string>();
    let kept = 0;
    let full = 0;
    let short = 0;
    for (let id = 0; id < words.vocabularySize; id++) {
      const word = words.word(id);
      for (let length = 1; length <= word.length; length++) {
        const [from, to] = words.prefixRange(word.slice(0, length));
        if (seen.has(`${from}:${to}`)) continue;
        seen.add(`${from}:${to}`);
        const scan = wide.get(from, to);
        if (to - from <= o.minWords) {
          expect(scan).toBeUndefined();
          continue;
        }
        expect(scan).toBeDefined();
        kept++;
        const found = holders(words, byDegree, o.scanLimit, from, to);
        expect(Array.from(scan!.docs)).toEqual(found.slice(0, o.keep).map((k) => byDegree[k]));
        if (found.length >= o.keep) {
          // The scan goes on right after the last company kept.
          expect(scan!.resumeAt).toBe(found[o.keep - 1]! + 1);
          full++;
        } else {
          // All it would find is kept: nothing is left to read.
          expect(scan!.resumeAt).toBe(o.scanLimit);
          short++;
        }
      }
    }
    expect(wide.size).toBe(kept);
    expect(kept).toBeGreaterThanOrEqual(5);
    expect(full).toBeGreaterThanOrEqual(2);
    expect(short).toBeGreaterThanOrEqual(1);
  });

  it('refuses settings that keep nothing', async () => {
    const words = await WordIndex.build(names, rank);
    expect(() => WidePrefixes.build(words, byDegree, { minWords: 0, scanLimit: 10, keep: 4 })).toThrow(
      RangeError,
    );
    expect(() => WidePrefixes.build(words, byDegree, { minWords: 3, scanLimit: 10, keep: 0 })).toThrow(
      RangeError,
    );
  });
});

describe('search over a word beginning that many words share', () => {
  // 1,500 companies whose second words all begin with "x" (1,500 distinct words: more than the 1,000
  // above which a beginning is read by scanning companies), two thirds of them subsidiaries.
  const rows: SearchRow[] = Array.from({ length: 1500 }, (_, i) =>
    buildSearchRow(`c${i}`, `Trading ${wordOf('x', i)} ${i % 5 === 0 ? 'Holdings' : 'Group'}`, {
      degree: (i * 7919) % 1000,
      searchedByDefault: i % 3 === 0,
    }),
  );
  const indexOf = () => {
    const store = { scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(rows)) };
    return CompanySearchIndex.build(store);
  };
  type Internals = { words: WordIndex; byDegree: Uint32Array; widePrefixes: WidePrefixes };

  it('answers as a scan of every company would, within the kept companies and past them', async () => {
    const index = await indexOf();
    const internals = index as unknown as Internals;
    const [from, to] = internals.words.prefixRange('x');
    expect(to - from).toBe(1500);
    // The kept start is used, and is shorter than what some of these queries need.
    expect(internals.widePrefixes.get(from, to)?.docs.length).toBe(256);

    const criteria = (over: Partial<SearchCriteria>): SearchCriteria => ({
      name: 'trading x',
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
      ...over,
    });
    const cases = [
      criteria({}),
      criteria({ includeSubsidiaries: true }),
      criteria({ name: 'x holdings', includeSubsidiaries: true }),
      // A budget beyond the kept companies: the scan goes on after them.
      criteria({ includeSubsidiaries: true, offset: 300, limit: 100 }),
      criteria({ offset: 250, limit: 100 }),
    ];
    const answers = () => ({
      searches: cases.map((c) => index.search(c)),
      suggestions: [index.suggest('trading x', 10, false), index.suggest('group x', 10, true)],
    });
    const kept = answers();
    expect(kept.searches[3]!.hits).toHaveLength(100);
    expect(kept.searches.every((s) => s.hits.length > 0)).toBe(true);

    // The same index without kept starts: every scan reads companies from the most important on.
    internals.widePrefixes = WidePrefixes.build(internals.words, internals.byDegree, {
      minWords: 1e9,
      scanLimit: 50_000,
      keep: 1,
    });
    expect(internals.widePrefixes.size).toBe(0);
    expect(answers()).toEqual(kept);
  });
});

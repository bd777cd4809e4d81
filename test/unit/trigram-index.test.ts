import { similarity, similarityOfSets, trigramSet } from '../../src/domain/trigram';
import { TrigramIndexBuilder } from '../../src/search/trigram-index';
import type { TrigramIndex, TrigramMatch, TrigramSearchResult } from '../../src/search/trigram-index';

/** Deterministic xorshift32, so a failure names the same names every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const SHARED = (
  'Holdings Industrial Industries Group International Systems Technologies Global Manufacturing Energy ' +
  'Electric General American Pacific Capital Partners Services Aerospace Motors Chemicals Steel Trading'
).split(' ');
const SUFFIXES = 'Inc.|Inc|LLC|Ltd|Co.|Co., Ltd.|Corp.|GmbH|AG|S.A.|PLC|& Sons|Limited|A/S'.split('|');
const SYLLABLES =
  'ac me bo e ing gen er al tech tron vo lar sun kor mi ta ra zen dor ex ion bel mont ri co lu ster'.split(
    ' ',
  );
const EXTRA =
  'Müller Société Générale Nestlé ŠKODA Ørsted Straße Türk İstanbul 東京電力 Газпром ΣΟΦΟΣ 3M 7-Eleven'.split(
    ' ',
  );

/** Company-like names: few syllables and many shared words, so names overlap a lot (the hard case). */
function makeNames(count: number, rand: () => number): string[] {
  const pick = <T>(list: readonly T[], skew = 1): T => list[Math.floor(list.length * rand() ** skew)]!;
  const brands: string[] = [];
  for (let i = 0; i < Math.max(50, count / 8); i++) {
    let w = '';
    for (let k = 0, parts = 1 + Math.floor(rand() * 3); k < parts; k++) w += pick(SYLLABLES);
    brands.push(w[0]!.toUpperCase() + w.slice(1));
  }
  brands.push(...EXTRA);
  const names: string[] = [];
  for (let d = 0; d < count; d++) {
    const words = [pick(brands, 1.5)];
    if (rand() < 0.3) words.push(pick(brands, 1.5));
    for (let k = 0, extra = Math.floor(rand() * 3); k < extra; k++) words.push(pick(SHARED, 1.5));
    if (rand() < 0.7) words.push(pick(SUFFIXES));
    names.push(words.join(' '));
  }
  // Docs without trigrams, a one-letter name, a very long word and a very long name.
  names.push('', '!!!', 'a', 'x'.repeat(300), 'Group '.repeat(60));
  return names;
}

function makeQueries(names: readonly string[], count: number, rand: () => number): string[] {
  const queries: string[] = [];
  for (let k = 0; k < count; k++) {
    const name = names[Math.floor(rand() * names.length)]!;
    const words = name.split(' ');
    const r = rand();
    if (r < 0.3) queries.push(name);
    else if (r < 0.45) queries.push(name.toUpperCase().replace(/[.,&]/g, ''));
    else if (r < 0.65) queries.push(words[0]!.slice(0, 1 + Math.floor(rand() * 4)));
    else if (r < 0.85) queries.push(`${words[0]!} ${(words[1] ?? 'grp').slice(0, 4)}`);
    else queries.push(`${words[0]!.slice(1)} ${SHARED[Math.floor(rand() * SHARED.length)]!}`);
  }
  queries.push(
    '',
    '---',
    'a',
    'x',
    'ab',
    'co',
    'Group',
    'İSTANBUL',
    'boe',
    'general elec',
    'acme industrial',
  );
  return queries;
}

/** The reference ranking: score every name, keep those at or above the threshold, sort. */
function ranked(
  scores: Float64Array,
  threshold: number,
  weights?: ArrayLike<number>,
  accept?: (doc: number) => boolean,
): TrigramMatch[] {
  const weightOf = (doc: number): number => (weights && doc < weights.length ? weights[doc]! : 0);
  const all: TrigramMatch[] = [];
  scores.forEach((s, doc) => {
    if (s > 0 && s >= threshold && (!accept || accept(doc))) all.push({ doc, similarity: s });
  });
  return all.sort((x, y) => {
    if (x.similarity !== y.similarity) return y.similarity - x.similarity;
    const wx = weightOf(x.doc);
    const wy = weightOf(y.doc);
    if (wx !== wy) return wy > wx ? 1 : -1;
    return x.doc - y.doc;
  });
}

function pageOf(all: TrigramMatch[], offset: number, limit: number): TrigramSearchResult {
  return { matches: all.slice(offset, offset + limit), hasMore: all.length > offset + limit };
}

/** The brute-force answer to a search. */
function bruteForce(
  scores: Float64Array,
  opts: {
    threshold: number;
    limit: number;
    offset: number;
    weights?: ArrayLike<number>;
    accept?: (doc: number) => boolean;
  },
): TrigramSearchResult {
  return pageOf(ranked(scores, opts.threshold, opts.weights, opts.accept), opts.offset, opts.limit);
}

function build(names: readonly string[]): TrigramIndex {
  const builder = new TrigramIndexBuilder();
  const numbers = names.map((name) => builder.add(name));
  expect(numbers.every((doc, i) => doc === i)).toBe(true);
  return builder.build();
}

function scoresFor(query: string, sets: readonly Uint32Array[]): Float64Array {
  const q = trigramSet(query);
  return Float64Array.from(sets, (set) => similarityOfSets(q, set));
}

describe('TrigramIndex.search equals a brute-force scan', () => {
  const rand = prng(20240611);
  const names = makeNames(4000, rand);
  const sets = names.map(trigramSet);
  const index = build(names);
  const queries = makeQueries(names, 300, rand);
  // Few distinct weights, so ties on similarity and weight both occur.
  const weights = Int32Array.from(names, () => Math.floor(rand() * 4));
  const everyThird = (doc: number): boolean => doc % 3 !== 0;

  it('indexes every name', () => {
    expect(index.size).toBe(names.length);
  });

  it.each([0, 0.1, 0.3, 0.5, 0.9, 1])('threshold %p, all queries, pages and filters', (threshold) => {
    let compared = 0;
    let nonEmpty = 0;
    // Threshold 0 matches nearly every name for every query; fewer queries keep it quick.
    for (const query of threshold === 0 ? queries.slice(0, 60) : queries) {
      const scores = scoresFor(query, sets);
      for (const accept of [undefined, everyThird]) {
        const all = ranked(scores, threshold, weights, accept);
        for (const [offset, limit] of [
          [0, 20],
          [5, 7],
          [30, 10],
          [0, 0],
          [0, 100000],
        ] as const) {
          const expected = pageOf(all, offset, limit);
          const actual = index.search(query, { threshold, limit, offset, weights, accept });
          if (JSON.stringify(actual) !== JSON.stringify(expected)) {
            // Only build the readable diff when something is wrong: toEqual on every case is slow.
            const opts = { threshold, limit, offset, accept: !!accept };
            expect({ query, opts, actual }).toEqual({ query, opts, actual: expected });
          }
          compared++;
          if (expected.matches.length > 0) nonEmpty++;
        }
      }
    }
    expect(compared).toBe((threshold === 0 ? 60 : queries.length) * 10);
    if (threshold < 1) expect(nonEmpty).toBeGreaterThan(compared / 10);
  });

  it('breaks ties by weight, then doc number, with any weight array', () => {
    const floatWeights = Float64Array.from(names, (_, d) =>
      d % 7 === 0 ? Infinity : d % 5 === 0 ? -Infinity : d % 3,
    );
    const shortWeights = new Uint32Array(100).fill(7);
    for (const query of queries.slice(0, 60)) {
      const scores = scoresFor(query, sets);
      for (const w of [undefined, floatWeights, shortWeights]) {
        const opts = { threshold: 0.2, limit: 50, offset: 3, weights: w };
        expect(index.search(query, opts)).toEqual(bruteForce(scores, opts));
      }
    }
  });

  it('calls accept with doc numbers only', () => {
    const seen = new Set<number>();
    index.search('Group Holdings', {
      threshold: 0.1,
      limit: 10,
      offset: 0,
      accept: (doc) => {
        seen.add(doc);
        return true;
      },
    });
    expect(seen.size).toBeGreaterThan(0);
    for (const doc of seen) expect(doc >= 0 && doc < names.length && Number.isInteger(doc)).toBe(true);
  });

  it('refuses a search from inside accept, and stays usable', () => {
    const nested = (): void => {
      index.search('Group', {
        threshold: 0.1,
        limit: 5,
        offset: 0,
        accept: () => index.search('x', opts) !== null,
      });
    };
    const opts = { threshold: 0.3, limit: 5, offset: 0 };
    expect(nested).toThrow('inside accept');
    expect(index.search('Group Holdings', opts)).toEqual(bruteForce(scoresFor('Group Holdings', sets), opts));
  });

  it('similarityTo equals similarity() on the name', () => {
    for (const query of queries.slice(0, 40)) {
      for (let doc = 0; doc < names.length; doc += 37) {
        expect(index.similarityTo(query, doc)).toBe(similarity(query, names[doc]!));
      }
    }
    expect(index.similarityTo('!!!', 0)).toBe(0);
    expect(() => index.similarityTo('x', names.length)).toThrow(RangeError);
  });

  it('matches nothing for a query without trigrams or trigrams no name has', () => {
    for (const query of ['', '   ', '---', '🚀']) {
      expect(index.search(query, { threshold: 0, limit: 10, offset: 0 })).toEqual({
        matches: [],
        hasMore: false,
      });
    }
    expect(index.search('qqqwwwqqq', { threshold: 0, limit: 10, offset: 0 })).toEqual({
      matches: [],
      hasMore: false,
    });
  });

  it('rejects bad options', () => {
    const ok = { threshold: 0.3, limit: 10, offset: 0 };
    expect(() => index.search('x', { ...ok, threshold: -0.1 })).toThrow(RangeError);
    expect(() => index.search('x', { ...ok, threshold: 1.5 })).toThrow(RangeError);
    expect(() => index.search('x', { ...ok, threshold: NaN })).toThrow(RangeError);
    expect(() => index.search('x', { ...ok, limit: -1 })).toThrow(RangeError);
    expect(() => index.search('x', { ...ok, offset: 1.5 })).toThrow(RangeError);
  });
});

describe('TrigramIndexBuilder', () => {
  it('numbers docs densely and is single use', () => {
    const builder = new TrigramIndexBuilder();
    expect(builder.add('Acme')).toBe(0);
    expect(builder.add('')).toBe(1);
    expect(builder.add('Boeing')).toBe(2);
    const index = builder.build();
    expect(index.size).toBe(3);
    expect(index.search('boeing', { threshold: 0.3, limit: 10, offset: 0 })).toEqual({
      matches: [{ doc: 2, similarity: 1 }],
      hasMore: false,
    });
    expect(() => builder.add('x')).toThrow();
    expect(() => builder.build()).toThrow();
  });

  it('builds an empty index', () => {
    const index = new TrigramIndexBuilder().build();
    expect(index.size).toBe(0);
    expect(index.search('acme', { threshold: 0, limit: 10, offset: 0 })).toEqual({
      matches: [],
      hasMore: false,
    });
  });

  it('keeps one row per distinct trigram set and finds every doc of it', () => {
    const names = [
      'Acme Steel Co.',
      'Boeing',
      'ACME STEEL CO',
      'Acme Steel',
      'acme steel co',
      'Acme Steel Co.',
    ];
    const index = build(names);
    expect(index.size).toBe(6);
    expect(index.rowCount).toBe(3);
    const sets = names.map(trigramSet);
    const weights = Int32Array.from([1, 0, 3, 2, 1, 0]);
    const notFourth = (doc: number): boolean => doc !== 4;
    for (const query of ['acme steel co', 'Acme', 'boeing co']) {
      for (const [offset, limit] of [
        [0, 10],
        [0, 2],
        [1, 2],
        [3, 1],
      ] as const) {
        const opts = { threshold: 0.3, limit, offset, weights, accept: notFourth };
        expect(index.search(query, opts)).toEqual(bruteForce(scoresFor(query, sets), opts));
      }
      names.forEach((name, doc) => expect(index.similarityTo(query, doc)).toBe(similarity(query, name)));
    }
  });

  it('finds similarity 0.7 names only with a float4 threshold, as pg does with a numeric one', () => {
    const builder = new TrigramIndexBuilder();
    builder.add('Boeing Co');
    const index = builder.build();
    expect(index.search('boeing', { threshold: 0.7, limit: 1, offset: 0 }).matches).toEqual([]);
    expect(index.search('boeing', { threshold: Math.fround(0.7), limit: 1, offset: 0 }).matches).toEqual([
      { doc: 0, similarity: Math.fround(0.7) },
    ]);
  });
});

describe('TrigramIndex at 200,000 names', () => {
  it('still equals the brute-force scan', () => {
    const rand = prng(7);
    const names = makeNames(200_000, rand);
    const index = build(names);
    const sets = names.map(trigramSet);
    for (const query of [...makeQueries(names, 12, rand), 'general elec', 'acme industrial', 'boe']) {
      const scores = scoresFor(query, sets);
      for (const threshold of [0.3, 0.6]) {
        const opts = { threshold, limit: 20, offset: 0 };
        expect(index.search(query, opts)).toEqual(bruteForce(scores, opts));
      }
    }
  });
});

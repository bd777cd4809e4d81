import { BANDS, BoundLists, BoundReader, bandOf, bandSimilarityBound } from '../../src/search/bound-lists';
import { WordIndex } from '../../src/search/word-index';

describe('bound lists', () => {
  it('bound the similarity of a query to every name of a band', () => {
    let checked = 0;
    for (let names = 0; names <= 120; names++) {
      const band = bandOf(names);
      expect(names).toBeGreaterThanOrEqual(BANDS[band]!);
      if (band + 1 < BANDS.length) expect(names).toBeLessThan(BANDS[band + 1]!);
      for (let query = 0; query <= 120; query++) {
        // The most a similarity can be: every trigram of the smaller set in the larger.
        const most = query === 0 || names === 0 ? 0 : Math.min(query, names) / Math.max(query, names);
        expect(bandSimilarityBound(band, query)).toBeGreaterThanOrEqual(most);
        expect(bandSimilarityBound(band, query)).toBeLessThanOrEqual(1);
        checked++;
      }
    }
    expect(checked).toBe(121 * 121);
    // Tight at the band's edges: a 10-trigram query and names of 17 to 20 trigrams.
    expect(bandSimilarityBound(bandOf(17), 10)).toBeCloseTo(10 / 17, 5);
    expect(bandSimilarityBound(-1, 10)).toBe(1);
  });

  it('read every posting of the words given once, the bound of the next never rising', async () => {
    // Names of many lengths holding "delta", some first, some not, some as the only word besides legal
    // forms; and "deltas", which "delta" begins.
    const names: string[][] = [];
    for (let i = 0; i < 400; i++) {
      const filler = 'x'.repeat(i % 37);
      names.push([i % 3 === 0 ? `Delta ${filler} ${i}` : `Acme ${filler} Delta ${i}`]);
    }
    names.push(['Delta GmbH'], ['Deltas Holdings', 'Delta Group'], ['Corporation'], ['Omega Corporation']);
    const rank = Uint32Array.from(names.keys());
    const words = await WordIndex.build(names, rank, 1000);
    const importance = (doc: number) => (doc % 10) / 10;
    const lists = await BoundLists.build(words, (doc) => 10 + (doc % 40), importance);
    const delta = words.idOf('delta');
    const deltas = words.idOf('deltas');
    const corporation = words.idOf('corporation');
    const reader = new BoundReader(lists, (id) => words.postingRange(id));
    const readings = new Map([
      [delta, 1],
      [deltas, 0.9],
      [corporation, 0.7],
    ]);
    expect(reader.start(readings, 0.4, 0.1, 12, 4096)).toBe(true);
    const read: number[] = [];
    let last = Infinity;
    while (reader.peek() !== -Infinity) {
      const bound = reader.peek();
      expect(bound).toBeLessThanOrEqual(last);
      last = bound;
      read.push(reader.next());
    }
    expect(reader.next()).toBe(-1);
    // Every posting of the two words once, and of the legal form only the name made of nothing else.
    const want = [...words.postingsOf(delta), ...words.postingsOf(deltas)];
    const legalOnly = [...words.postingsOf(corporation)].filter(
      (e) => words.entryDoc[e] === names.length - 2,
    );
    expect(legalOnly).toHaveLength(1);
    expect(words.postingsOf(corporation).length).toBe(2);
    expect(read.slice().sort((a, b) => a - b)).toEqual([...want, ...legalOnly].sort((a, b) => a - b));
    expect(read.length).toBeGreaterThan(400);
    // Too many bands for the limit: not started.
    expect(reader.start(readings, 0.4, 0.1, 12, 2)).toBe(false);
  });
});

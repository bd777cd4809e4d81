import { BANDS, bandOf, bandSimilarityBound } from '../../src/search/bound-lists';

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
});

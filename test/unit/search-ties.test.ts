import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import type { SearchRow } from '../../src/domain/search-row';
import { buildSearchRow } from '../support/factories';

/**
 * 600 companies, many with the same name and the same number of relationships, so that similarity and
 * degree leave ties for the last key to settle. The store may stream them in any order.
 */
function rows(): SearchRow[] {
  return Array.from({ length: 600 }, (_, i) => {
    const name =
      i % 3 === 0 ? 'Acme Steel Works GmbH' : i % 3 === 1 ? 'Acme Steel Work Ltd' : `Nordic Glass ${i}`;
    const vid = `c${String((i * 7919) % 600).padStart(4, '0')}`;
    return buildSearchRow(vid, name, { degree: i % 4, cities: i % 2 === 0 ? ['Hamburg'] : [] });
  });
}

function build(order: SearchRow[]): Promise<CompanySearchIndex> {
  const store = { scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(order)) };
  return CompanySearchIndex.build(store);
}

const SEARCHES: Partial<SearchCriteria>[] = [
  { name: 'Acme Steel Works GmbH' },
  { name: 'Acme Steel Works GmbH', offset: 10 },
  { name: 'acme steel', sort: 'similarity' },
  { name: 'acme steel', sort: 'similarity', offset: 40 },
  { name: 'Acme Steel Work', sort: 'similarity', city: 'hamburg' },
  { name: 'Acme Steel Work', city: 'hamburg' },
];

describe('search ties', () => {
  it('answers the same pages whatever order the store streamed the companies in', async () => {
    const forward = rows();
    const backward = [...forward].reverse();
    const a = await build(forward);
    const b = await build(backward);
    for (const s of SEARCHES) {
      const c: SearchCriteria = {
        minSimilarity: 0.3,
        includeSubsidiaries: false,
        limit: 10,
        offset: 0,
        ...s,
      };
      const vidsOf = (index: CompanySearchIndex) => index.search(c).hits.map((h) => h.vid);
      expect(vidsOf(a)).toHaveLength(10);
      expect(vidsOf(b)).toEqual(vidsOf(a));
    }
  });

  it('breaks ties of similarity and relationships by vid', async () => {
    const index = await build(rows());
    const { hits } = index.search({
      name: 'Acme Steel Works GmbH',
      sort: 'similarity',
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 20,
      offset: 0,
    });
    const degree = new Map(rows().map((r) => [r.vid, r.degree]));
    const keys = hits.map((h) => [-h.similarity!, -degree.get(h.vid)!, h.vid] as const);
    expect(hits.map((h) => h.similarity)).toContain(1);
    const sorted = [...keys].sort((x, y) => x[0] - y[0] || x[1] - y[1] || (x[2] < y[2] ? -1 : 1));
    expect(keys).toEqual(sorted);
  });
});

describe('search candidates', () => {
  /**
   * 300 companies whose names differ only in a code of three characters, so that a query sharing none
   * of the codes' trigrams is as similar to each, and each with its own number of relationships. The
   * query's two words are run together in the names and match no word of them: only the trigram stage
   * draws these companies, and it takes fewer candidates than there are names tying on its score.
   */
  const same = (): SearchRow[] =>
    Array.from({ length: 300 }, (_, i) =>
      buildSearchRow(
        `d${String(i).padStart(3, '0')}`,
        `Nordlichtglas k${String(i).padStart(3, '0').slice(1)}${'abc'[i % 3]}`,
        { degree: i },
      ),
    );

  it('are drawn alike however the store streamed the companies, so an index built again answers the same', async () => {
    const forward = same();
    const a = await build(forward);
    const b = await build([...forward].reverse());
    const c: SearchCriteria = {
      name: 'Nordlicht Glas',
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
    };
    const vidsOf = (index: CompanySearchIndex) => index.search(c).hits.map((h) => h.vid);
    // All else equal, relevance puts the companies with the most relationships first.
    const expected = Array.from({ length: 10 }, (_, i) => `d${299 - i}`);
    expect(vidsOf(a)).toEqual(expected);
    expect(vidsOf(b)).toEqual(expected);
  });
});

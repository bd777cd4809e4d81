import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import type { SearchRow } from '../../src/domain/search-row';
import type { GraphStore } from '../../src/store/graph-store';
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
  return CompanySearchIndex.build(store as unknown as GraphStore);
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

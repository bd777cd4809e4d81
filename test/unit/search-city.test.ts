import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchRow } from '../../src/domain/search-row';
import { buildSearchRow } from '../support/factories';

describe('the city filter', () => {
  it('finds a city whatever its case and accents, and only the whole city', async () => {
    const rows: SearchRow[] = [
      buildSearchRow('c1', 'Anadolu Cam', { cities: ['İstanbul'] }),
      buildSearchRow('c2', 'Alpine Werk', { cities: ['Zürich', 'München'] }),
      buildSearchRow('c3', 'Paulista Aco', { cities: ['São Paulo'] }),
      buildSearchRow('c4', 'Nord Bois', { cities: ['Montréal'] }),
      buildSearchRow('c5', 'Istanbul Deniz', { cities: ['Istanbulkent'] }),
    ];
    const index = await CompanySearchIndex.build({
      scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(rows)),
    });
    const inCity = (city: string) =>
      index
        .search({ city, minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0 })
        .hits.map((h) => h.vid);
    expect(
      ['Istanbul', 'istanbul', 'İSTANBUL', ' Zurich ', 'munchen', 'Sao Paulo', 'montreal', 'MONTRÉAL'].map(
        inCity,
      ),
    ).toEqual([['c1'], ['c1'], ['c1'], ['c2'], ['c2'], ['c3'], ['c4'], ['c4']]);
    expect(inCity('Istan')).toEqual([]);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { importDirectory } from '../../src/import/import-directory';
import { CompanySearchIndex } from '../../src/search/company-search';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { companyRow, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';

describe('aliases and industry in the import format', () => {
  let dir: string;
  let store: EmbeddedGraphStore;
  let rejected: { line: number; reason: string }[];
  let warnings: { file: string; line: number; reason: string }[];
  let index: CompanySearchIndex;
  beforeAll(async () => {
    dir = tempDir('aliases');
    const input = writeImportDir(path.join(dir, 'in'), {
      companies: [
        companyRow({
          vid: 'tsmc',
          name: 'Taiwan Semiconductor Manufacturing Co Ltd',
          aliases: ' TSM | Taiwan Semi|TSM ',
          industry: 'Semiconductors',
          industry_code_system: 'naics',
          industry_code: '334413',
        }),
        companyRow({
          vid: 'parts',
          name: 'Semi Conductor Parts Ltd',
          domiciled_country: 'de',
          incorporated_country: 'KOR',
        }),
        companyRow({
          vid: 'atlantis',
          name: 'Atlantis Trading Ltd',
          domiciled_country: 'Atlantis',
          incorporated_country: 'South Korea',
        }),
        companyRow({ vid: 'empty-alias', name: 'Broken Aliases Ltd', aliases: 'A||B' }),
        companyRow({ vid: 'code-alone', name: 'Code Without System Ltd', industry_code: '1234' }),
        // Rejected for its date: its country, which names none, is not warned of besides.
        companyRow({
          vid: 'narnia',
          name: 'Narnia Ltd',
          domiciled_country: 'Narnia',
          ipo_date: '2023-02-30',
        }),
      ],
    });
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'g'), connections: 1, bufferPoolMb: 128 });
    await store.open();
    const result = await importDirectory(store, input, { workDir: dir, maxRejected: 10 });
    rejected = result.rejected;
    warnings = result.warnings;
    index = await CompanySearchIndex.build(store);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores aliases (trimmed, repeats dropped) and industry with its code, shown in the profile', async () => {
    expect(await store.getCompany('tsmc')).toMatchObject({
      aliases: ['TSM', 'Taiwan Semi'],
      industry: 'Semiconductors',
      industry_code_system: 'NAICS',
      industry_code: '334413',
    });
    expect(await store.getCompany('parts')).toMatchObject({
      aliases: [],
      industry: null,
      industry_code_system: null,
      industry_code: null,
    });
  });

  it('rejects an empty alias, a code without its system and an impossible date', () => {
    expect(rejected.map((r) => r.reason)).toEqual([
      expect.stringMatching(/empty alias/),
      expect.stringMatching(/industry_code/),
      expect.stringMatching(/ipo_date/),
    ]);
  });

  it('names the country of a code, keeps names as given, and warns of a country it cannot map', async () => {
    // As ISO 3166 names it, which the interface asks for (not the common "South Korea").
    expect(await store.getCompany('parts')).toMatchObject({
      domiciled_country: 'Germany',
      incorporated_country: 'Korea, Republic of',
    });
    expect(await store.getCompany('atlantis')).toMatchObject({
      domiciled_country: 'Atlantis',
      incorporated_country: 'South Korea',
    });
    expect(warnings).toEqual([
      {
        file: 'companies.csv',
        line: 4,
        reason: 'domiciled_country "Atlantis" names no ISO 3166 country; kept as given',
      },
    ]);
  });

  it('filters a search by industry text, code, or code system and code', () => {
    const byIndustry = (industry: string) =>
      index
        .search({ industry, minSimilarity: 0.3, includeSubsidiaries: true, limit: 5, offset: 0 })
        .hits.map((h) => h.vid);
    expect(byIndustry('semiconductors')).toEqual(['tsmc']);
    expect(byIndustry('334413')).toEqual(['tsmc']);
    expect(byIndustry('naics:334413')).toEqual(['tsmc']);
    expect(byIndustry('isic:334413')).toEqual([]);
    expect(byIndustry('semi')).toEqual([]);
  });

  it('matches aliases in search and says which one matched', () => {
    const search = (name: string) =>
      index.search({ name, minSimilarity: 0.3, includeSubsidiaries: true, limit: 5, offset: 0 }).hits;
    expect(search('taiwan semi')[0]).toMatchObject({ vid: 'tsmc', matchedName: 'Taiwan Semi' });
    expect(search('tsm')[0]).toMatchObject({ vid: 'tsmc', matchedName: 'TSM' });
    expect(index.suggest('taiwan se', 5, true)[0]).toMatchObject({ vid: 'tsmc' });
  });
});

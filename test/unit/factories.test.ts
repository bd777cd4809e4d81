import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { buildCompany, companyRow, relationshipRow, toCsv, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';

describe('test data factories', () => {
  it('build distinct companies with the overrides applied', () => {
    const a = buildCompany();
    const b = buildCompany({ name: 'Bosch', domiciled_country: 'Germany' });
    expect(a.vid).not.toEqual(b.vid);
    expect(b).toMatchObject({ name: 'Bosch', domiciled_country: 'Germany', cid_id: b.vid });
  });

  it('write CSV that a CSV reader reads back to the same cells', () => {
    const rows = [
      companyRow({ vid: 'q', name: 'Say "hi", then\nleave' }),
      companyRow({ vid: 'r', is_public: true }),
    ];
    const back: Record<string, string>[] = parse(toCsv(rows), { columns: true });
    expect(back).toEqual([
      { vid: 'q', name: 'Say "hi", then\nleave', is_public: '' },
      { vid: 'r', name: 'Company r', is_public: 'true' },
    ]);
  });

  it('write an import directory with the required relationships file even when it is empty', () => {
    const dir = tempDir('factories');
    try {
      writeImportDir(dir, { companies: [companyRow({ vid: 'a' })] });
      expect(fs.readdirSync(dir).sort()).toEqual(['companies.csv', 'relationships.csv']);
      writeImportDir(dir, {
        companies: [companyRow({ vid: 'a' })],
        relationships: [relationshipRow('a', 'b')],
      });
      expect(fs.readFileSync(path.join(dir, 'relationships.csv'), 'utf8')).toMatch(
        /^edge_id,supplier_id,customer_id,confidence_score\ne\d+,a,b,0.5\n$/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

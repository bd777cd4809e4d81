import fs from 'node:fs';
import path from 'node:path';
import { stageImport } from '../../src/import/stage';
import { ADMIN_ARGS_FILE, writeNeo4jAdminFiles } from '../../src/store/neo4j/neo4j-admin-files';
import { companyRow, relationshipRow, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';

/** A written file as rows of fields, header first. */
function rows(dir: string, file: string): string[][] {
  return fs
    .readFileSync(path.join(dir, file), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
}

/** One row of a written file as column name (without its type) to value. */
function record(dir: string, file: string, key: string): Record<string, string> {
  const [header, ...data] = rows(dir, file);
  const found = data.find((r) => r[0] === key);
  if (!found) throw new Error(`${file} has no row ${key}`);
  return Object.fromEntries(header!.map((h, i) => [h.split(':')[0] || h, found[i]!]));
}

describe('bulk-load files for neo4j-admin', () => {
  let work: string;
  let out: string;
  let lineage: string;

  beforeAll(async () => {
    work = tempDir('admin-files');
    const input = writeImportDir(path.join(work, 'input'), {
      companies: [
        companyRow({
          vid: 'A',
          name: 'Alpha',
          domains: 'alpha.com|alpha.de',
          aliases: 'Alpha, Inc.|ALP',
          incorporation_date: '1999-04-01',
          is_public: 'true',
        }),
        companyRow({ vid: 'B', name: 'Beta' }),
      ],
      relationships: [relationshipRow('A', 'B', { edge_id: 'e1', confidence_score: 0.75, hs_codes: '8471' })],
      identifiers: [
        { vid: 'A', type: 'LEI', value: 'HWUPKR0MPOU8FGXBT394' },
        { vid: 'B', type: 'LEI', value: 'HWUPKR0MPOU8FGXBT394' },
      ],
      addresses: [{ vid: 'A', city: 'Berlin', country: 'Germany' }],
    });
    const staging = path.join(work, 'staging');
    await stageImport(input, staging);
    out = path.join(work, 'out');
    ({ lineage } = await writeNeo4jAdminFiles(staging, out));
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('types the columns for the loader and keys nodes by their ids', () => {
    const [header] = rows(out, 'Company.tsv');
    expect(header![0]).toBe('vid:ID(Company)');
    expect(header).toEqual(
      expect.arrayContaining([
        'domains:string[]',
        'aliases:string[]',
        'incorporation_date:datetime',
        'is_public:boolean',
        'count_suppliers:long',
        'identifiers',
      ]),
    );
    expect(rows(out, 'SUPPLIES.tsv')[0]!.slice(0, 3)).toEqual([
      ':START_ID(Company)',
      ':END_ID(Company)',
      'edge_id',
    ]);
    expect(rows(out, 'Edge.tsv')[0]).toEqual(
      expect.arrayContaining(['edge_id:ID(Edge)', 'confidence_score:double']),
    );
  });

  it('writes lists without brackets, their elements decoded, and no value for an empty list', () => {
    const a = record(out, 'Company.tsv', 'A');
    expect(a.domains).toBe('alpha.com\u001falpha.de');
    expect(a.aliases).toBe('Alpha, Inc.\u001fALP');
    expect(a.incorporation_date).toBe('1999-04-01T00:00:00Z');
    expect(record(out, 'Company.tsv', 'B').domains).toBe('');
    expect(record(out, 'Edge.tsv', 'e1').hs_codes).toBe('8471');
  });

  it('makes one node of an identifier that two companies name, and a node of each address', () => {
    const identifiers = rows(out, 'Identifier.tsv').slice(1);
    expect(identifiers).toEqual([['["LEI","HWUPKR0MPOU8FGXBT394"]', 'LEI', 'HWUPKR0MPOU8FGXBT394']]);
    expect(
      rows(out, 'IDENTIFIED_BY.tsv')
        .slice(1)
        .map((r) => r[0])
        .sort(),
    ).toEqual(['A', 'B']);
    expect(record(out, 'Address.tsv', 'A#0')).toMatchObject({
      city: 'Berlin',
      country: 'Germany',
      region: '',
    });
    expect(rows(out, 'LOCATED_AT.tsv').slice(1)).toEqual([['A', 'A#0']]);
  });

  it('leaves a generation record and the argument file that names every file', () => {
    expect(record(out, 'TiergraphMeta.tsv', 'graph')).toMatchObject({ generation: '1', lineage });
    const args = fs.readFileSync(path.join(out, ADMIN_ARGS_FILE), 'utf8').trim().split('\n');
    expect(args.slice(0, 3)).toEqual(['--delimiter=TAB', '--array-delimiter=U+001F', '--quote=U+0001']);
    const named = args.slice(3).map((a) => a.split('=').pop());
    expect(named.sort()).toEqual(
      fs
        .readdirSync(out)
        .filter((f) => f.endsWith('.tsv'))
        .sort(),
    );
  });

  it('refuses a staged line with the wrong number of fields', async () => {
    const staging = path.join(work, 'broken-staging');
    fs.cpSync(path.join(work, 'staging'), staging, { recursive: true });
    fs.appendFileSync(path.join(staging, 'SUPPLIES.tsv'), 'A\tB\te9\n');
    await expect(writeNeo4jAdminFiles(staging, path.join(work, 'broken-out'))).rejects.toThrow(
      /SUPPLIES\.tsv line 3: 3 fields, expected 8/,
    );
  });

  it('refuses a directory that holds anything', async () => {
    await expect(writeNeo4jAdminFiles(path.join(work, 'staging'), out)).rejects.toThrow(/not empty/);
  });
});

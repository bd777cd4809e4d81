import fs from 'node:fs';
import path from 'node:path';
import { importDirectory } from '../../src/import/import-directory';
import { ImportAbortedError } from '../../src/import/stage-result';
import { CompanySearchIndex } from '../../src/search/company-search';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { ROOT, tempDir } from '../support/paths';

const fixture = (name: string) => path.join(ROOT, 'test', 'fixtures', 'import', name);
const all = { minConfidence: 0, evidenceFrom: null, limit: 50, offset: 0 };

describe('import into the embedded store', () => {
  let dir: string;
  let store: EmbeddedGraphStore;

  beforeAll(async () => {
    dir = tempDir('import');
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 256 });
    await store.open();
    await importDirectory(store, fixture('tiny'), { workDir: dir });
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the derived profile with identifiers and addresses', async () => {
    const a = await store.getCompany('A');
    expect(a).toMatchObject({
      vid: 'A',
      cid_id: 'K1',
      name: 'Alpha',
      company_legal_name: 'Alpha GmbH',
      count_suppliers: 3,
      count_customers: 1,
      count_supplier_evidence: 4,
      count_customer_evidence: 1,
      is_public: true,
      is_cluster_parent: true,
      domiciled_country: 'Germany',
    });
    expect(a!.identifiers).toEqual([
      { type: 'LEI', value: 'HWUPKR0MPOU8FGXBT394' },
      { type: 'Wikipedia', value: 'Alpha, the company' },
    ]);
    expect(a!.addresses.map((x) => [x.address_line, x.city, x.region, x.type])).toEqual([
      ['Hauptstraße 1', 'Berlin', 'Berlin', 'headquarters'],
      ['Werkstraße 2', 'Hamburg', null, 'plant'],
    ]);
  });

  it('serves an edge with its evidence newest first and its list values', async () => {
    const e1 = await store.getEdge('e1');
    expect(e1).toMatchObject({
      supplier_id: 'G',
      customer_id: 'A',
      confidence_score: 0.9,
      latest_edge_date: '2022-06-30T10:00:00.000Z',
      hs_codes: ['8471', '8471.30'],
    });
    expect(e1!.evidences.map((v) => [v.id, v.date, v.type, v.finalised_on])).toEqual([
      ['v2', '2022-06-30T10:00:00.000Z', 'customs', '2022-07-01T00:00:00.000Z'],
      ['v1', '2021-01-01T00:00:00.000Z', 'text', null],
    ]);
    const e7 = await store.getEdge('e7');
    expect(e7).toMatchObject({ evidences: [], latest_edge_date: null, hs_codes: [] });
  });

  it('keeps the relationship date given in the file over the evidence', async () => {
    expect((await store.getEdge('e3'))!.latest_edge_date).toBe('2020-01-01T00:00:00.000Z');
  });

  it('groups cluster relationships under cluster parents', async () => {
    const parent = await store.getClusterParent('B');
    expect(parent).toBe('A');
    const sup = await store.listRelationships(parent!, 'suppliers', 'cluster', all);
    expect(
      sup.items.map((i) => [i.counterpart.vid, i.relationship.edge_ids, i.relationship.confidence_score]),
    ).toEqual([
      ['G', ['e1', 'e2'], 0.9],
      ['D', ['e3'], 0.7],
    ]);
    expect(sup.items[0]!.evidences.evidence_types).toEqual(['customs', 'text']);
    const cus = await store.listRelationships(parent!, 'customers', 'cluster', all);
    expect(cus.items.map((i) => [i.counterpart.vid, i.relationship.edge_ids])).toEqual([['E', ['e5', 'e6']]]);
  });

  it('feeds the search index with identifiers, cities and the default-search flag', async () => {
    const index = await CompanySearchIndex.build(store);
    const vids = (c: Partial<Parameters<CompanySearchIndex['search']>[0]>) =>
      index
        .search({ minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0, ...c })
        .hits.map((h) => h.vid)
        .sort();
    expect(vids({ identifier: 'hwupkr0mpou8fgxbt394' })).toEqual(['A']);
    expect(vids({ identifier: 'HWUPKR0MPOU8FGXBT394', includeSubsidiaries: true })).toEqual(['A', 'B']);
    expect(vids({ city: 'ulsan' })).toEqual(['D']);
    expect(vids({ name: 'Gamma' })).toEqual(['G']);
  });

  it('replaces the whole graph on a second import and leaves it untouched when an import aborts', async () => {
    const before = await store.stats();
    await expect(
      importDirectory(store, fixture('bad'), { workDir: dir, maxRejected: 0 }),
    ).rejects.toBeInstanceOf(ImportAbortedError);
    await expect(store.stats()).resolves.toEqual(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('staging-'))).toEqual([]);
    const generation = store.generation;
    await importDirectory(store, fixture('tiny'), { workDir: dir });
    expect(store.generation).toBeGreaterThan(generation);
    await expect(store.stats()).resolves.toEqual(before);
    expect(fs.readdirSync(path.join(dir, 'graph')).filter((f) => f.endsWith('.kuzu'))).toHaveLength(1);
  });
});

describe('import of values the staging files do not quote', () => {
  let dir: string;
  let store: EmbeddedGraphStore;

  beforeAll(async () => {
    dir = tempDir('import-text');
    const input = path.join(dir, 'input');
    fs.mkdirSync(input, { recursive: true });
    fs.writeFileSync(
      path.join(input, 'companies.csv'),
      [
        'vid,name,company_legal_name,description,websites',
        `q,"""Quoted"" Co","O'Brien \\ Sons","tab\there, ""quotes"", a \\"" pair","https://q.example.com/""x"""`,
        's,Supplier,,,',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(input, 'identifiers.csv'),
      'vid,type,value\nq,Wikipedia,"say ""hi"" \\ there"\n',
    );
    fs.writeFileSync(
      path.join(input, 'relationships.csv'),
      'edge_id,supplier_id,customer_id,confidence_score\nr1,s,q,0.5\n',
    );
    fs.writeFileSync(
      path.join(input, 'evidence.csv'),
      [
        'id,edge_id,date,type,url,metadata,created_on',
        'x1,r1,2021-01-01,text,"https://n.example.com/a?q=""x""","{""k"":""a\\\\""b""}",2021-01-02T03:04:05Z',
        '',
      ].join('\n'),
    );
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 1, bufferPoolMb: 128 });
    await store.open();
    await importDirectory(store, input, { workDir: dir, maxRejected: 0 });
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps quotes, backslashes and leading quotes exactly, with free-text tabs as spaces', async () => {
    const q = await store.getCompany('q');
    expect(q).toMatchObject({
      name: '"Quoted" Co',
      company_legal_name: "O'Brien \\ Sons",
      description: 'tab here, "quotes", a \\" pair',
      websites: ['https://q.example.com/%22x%22'],
    });
    expect(q!.identifiers).toEqual([{ type: 'Wikipedia', value: 'say "hi" \\ there' }]);
  });

  it('reads positional evidence items back with their full timestamps', async () => {
    const e = await store.getEdge('r1');
    expect(e!.evidences).toEqual([
      {
        id: 'x1',
        date: '2021-01-01T00:00:00.000Z',
        type: 'text',
        url: 'https://n.example.com/a?q="x"',
        domain: 'n.example.com',
        status_id: null,
        provided_by_customer: null,
        metadata: '{"k":"a\\\\"b"}',
        finalised_on: null,
        created_on: '2021-01-02T03:04:05.000Z',
        last_modified_on: null,
      },
    ]);
  });
});

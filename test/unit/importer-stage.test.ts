import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { stageImport } from '../../src/import/stage';
import { ImportAbortedError } from '../../src/import/stage-result';
import type { RejectedRow } from '../../src/import/stage-result';
import {
  EVIDENCE_FIELDS,
  STAGING_DELIMITER,
  SUCCESS_MARKER,
  TABLES,
  encodeJson,
  stagingFile,
} from '../../src/store/tables';
import type { TableName } from '../../src/store/tables';

const FIXTURES = join(__dirname, '..', 'fixtures', 'import');
/** What a complete staging directory holds: the table files and the marker, no temporary files. */
/** The staging files, the marker, and the keys of the Edge lines (staged-keys.ts). */
const STAGED_FILES = [
  ...(Object.keys(TABLES) as TableName[]).map(stagingFile),
  SUCCESS_MARKER,
  `${stagingFile('Edge')}.keys`,
].sort();

/** Rows of a staging file as objects keyed by its header; every row must have the header's width. */
async function staged(dir: string, table: TableName): Promise<Record<string, string>[]> {
  const text = await readFile(join(dir, stagingFile(table)), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const [head, ...rows] = text
    .slice(0, -1)
    .split('\n')
    .map((line) => line.split(STAGING_DELIMITER));
  for (const r of rows) expect(r.length).toBe(head!.length);
  return rows.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i]!])));
}

function byKey(rows: Record<string, string>[], key: string): Map<string, Record<string, string>> {
  return new Map(rows.map((r) => [r[key]!, r]));
}

const DATE_FIELDS = new Set(['date', 'finalised_on', 'created_on', 'last_modified_on']);

/**
 * An evidence item as staged in Edge.evidences: an array in EVIDENCE_FIELDS
 * order, dates at midnight UTC shortened to YYYY-MM-DD, blanks null.
 */
function item(id: string, date: string, fields: Record<string, string | number | boolean | null> = {}) {
  const all: Record<string, string | number | boolean | null> = { id, date, ...fields };
  return EVIDENCE_FIELDS.map((f) => {
    const v = all[f] ?? null;
    return DATE_FIELDS.has(f) && typeof v === 'string' ? v.replace(/T00:00:00Z$/, '') : v;
  });
}

/** Checks that every JSON column of a staging directory holds exactly what encodeJson writes. */
async function expectCanonicalJson(dir: string): Promise<void> {
  for (const t of Object.keys(TABLES) as TableName[]) {
    const json = TABLES[t].columns.filter((c) => c[1] === 'JSON').map((c) => c[0]);
    for (const row of await staged(dir, t)) {
      for (const c of json) expect(encodeJson(JSON.parse(row[c]!))).toBe(row[c]);
    }
  }
}

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tg-stage-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('stageImport on a tiny hand-computed dataset', () => {
  let out: string;
  let result: Awaited<ReturnType<typeof stageImport>>;
  beforeAll(async () => {
    out = join(work, 'tiny-staging');
    result = await stageImport(join(FIXTURES, 'tiny'), out, { maxRejected: 0 });
  });

  it('accepts every row and writes every table with the contract header', async () => {
    expect(result.rejected).toEqual([]);
    expect(result.inputRows).toEqual({
      'companies.csv': 5,
      'clusters.csv': 2,
      'identifiers.csv': 3,
      'addresses.csv': 3,
      'relationships.csv': 7,
      'evidence.csv': 7,
    });
    expect(result.counts).toEqual({ Company: 5, Edge: 7, SUPPLIES: 7, CLUSTER_SUPPLIES: 3 });
    expect(result.items).toEqual({ evidence: 7, identifiers: 3, addresses: 3 });
    for (const t of Object.keys(TABLES) as TableName[]) {
      const text = await readFile(join(out, stagingFile(t)), 'utf8');
      const spec = TABLES[t];
      const cols = spec.columns.map((c) => c[0]);
      expect(text.split('\n')[0]).toBe((spec.kind === 'rel' ? ['from', 'to', ...cols] : cols).join('\t'));
      expect((await staged(out, t)).length).toBe(result.counts[t]);
    }
    expect((await readdir(out)).sort()).toEqual(STAGED_FILES);
    expect(JSON.parse(await readFile(join(out, SUCCESS_MARKER), 'utf8'))).toEqual({
      counts: result.counts,
      items: result.items,
      inputRows: result.inputRows,
      rejected: 0,
    });
  });

  it('derives clusters and counts', async () => {
    const c = byKey(await staged(out, 'Company'), 'vid');
    const pick = (vid: string) => {
      const r = c.get(vid)!;
      return [
        r.cid_id,
        r.is_cluster_parent,
        r.cluster_parent_vid,
        r.cluster_size,
        r.count_suppliers,
        r.count_customers,
        r.count_supplier_evidence,
        r.count_customer_evidence,
      ];
    };
    expect(pick('A')).toEqual(['K1', 'true', 'A', '2', '3', '1', '4', '1']);
    expect(pick('B')).toEqual(['K1', 'false', 'A', '2', '1', '2', '1', '2']);
    expect(pick('G')).toEqual(['G', 'false', 'G', '1', '1', '2', '0', '3']);
    expect(pick('D')).toEqual(['D', 'false', 'D', '1', '0', '1', '0', '1']);
    expect(pick('E')).toEqual(['E', 'false', 'E', '1', '2', '1', '2', '0']);
    const a = c.get('A')!;
    expect([a.name, a.company_legal_name, a.domiciled_country, a.is_public]).toEqual([
      'Alpha',
      'Alpha GmbH',
      'Germany',
      'true',
    ]);
    expect(c.get('D')!.domiciled_country).toBe('Korea, Republic of');
    expect(c.get('D')!.is_public).toBe('true');
    expect(c.get('E')!.is_public).toBe('false');
    expect(c.get('G')!.is_public).toBe('');
  });

  it('derives per-edge dates and evidence types, and the clusters that give cluster edge ids', async () => {
    const e = byKey(await staged(out, 'Edge'), 'edge_id');
    const s = byKey(await staged(out, 'SUPPLIES'), 'edge_id');
    const cid = (vid: string) => byKeyCompany.get(vid)!.cid_id!;
    const byKeyCompany = byKey(await staged(out, 'Company'), 'vid');
    const pick = (id: string) => {
      const r = s.get(id)!;
      // A relationship's cluster edge id is read off its companies' clusters (toTierRelationship).
      const clusterEdge = cid(r.from!) === cid(r.to!) ? '' : `${cid(r.from!)}~${cid(r.to!)}`;
      return [
        r.from,
        r.to,
        r.latest_edge_date,
        e.get(id)!.latest_finalized_edge_date,
        r.evidence_types,
        clusterEdge,
      ];
    };
    expect(pick('e1')).toEqual([
      'G',
      'A',
      '2022-06-30T10:00:00Z',
      '2022-07-01T00:00:00Z',
      '[customs,text]',
      'G~K1',
    ]);
    expect(pick('e2')).toEqual(['G', 'B', '2019-05-05T00:00:00Z', '', '[text]', 'G~K1']);
    expect(pick('e3')).toEqual(['D', 'A', '2020-01-01T00:00:00Z', '', '[text]', 'D~K1']);
    expect(pick('e4')).toEqual(['B', 'A', '2018-01-01T00:00:00Z', '', '[filing]', '']);
    expect(pick('e5')).toEqual(['A', 'E', '2020-02-02T00:00:00Z', '2020-02-10T00:00:00Z', '[text]', 'K1~E']);
    expect(pick('e6')).toEqual(['B', 'E', '2021-12-31T00:00:00Z', '', '[customs]', 'K1~E']);
    expect(pick('e7')).toEqual(['E', 'G', '', '', '[]', 'E~G']);
    expect(s.get('e1')!.hs_codes).toBe('[8471,8471.30]');
    expect(s.get('e2')!.hs_codes).toBe('[]');
    expect(e.get('e1')!.hs_codes).toBe('[8471,8471.30]');
    expect(e.get('e1')!.label).toBe('supply');
    // Label and the finalised and modified dates are on the Edge row only.
    expect(Object.keys(s.get('e1')!)).not.toContain('label');
    expect(Object.keys(s.get('e1')!)).not.toContain('cluster_edge_id');
    const e1 = e.get('e1')!;
    expect([e1.supplier_id, e1.customer_id, e1.confidence_score, e1.latest_edge_date]).toEqual([
      'G',
      'A',
      '0.9',
      '2022-06-30T10:00:00Z',
    ]);
  });

  it('builds one cluster edge per pair of different clusters, not of two single companies', async () => {
    const ce = byKey(await staged(out, 'CLUSTER_SUPPLIES'), 'relationship_id');
    const pick = (id: string) => {
      const r = ce.get(id)!;
      return [r.from, r.to, r.edge_ids, r.confidence_score, r.latest_edge_date, r.evidence_types];
    };
    // E and G are clusters of one company each: e7 between them stands for itself.
    expect([...ce.keys()].sort()).toEqual(['D~K1', 'G~K1', 'K1~E']);
    expect(pick('G~K1')).toEqual(['G', 'A', '[e1,e2]', '0.9', '2022-06-30T10:00:00Z', '[customs,text]']);
    expect(pick('D~K1')).toEqual(['D', 'A', '[e3]', '0.7', '2020-01-01T00:00:00Z', '[text]']);
    expect(pick('K1~E')).toEqual(['A', 'E', '[e5,e6]', '0.8', '2021-12-31T00:00:00Z', '[customs,text]']);
  });

  it('writes tab-separated rows with nothing quoted, and no line break inside a field', async () => {
    const company = (await readFile(join(out, stagingFile('Company')), 'utf8')).split('\n')[2];
    expect(company).toBe(
      [
        ...'B,K1,Beta,,,[],[],France,,,,,false,,,false,A,2,1,2,1,2'.split(','),
        '[{"type":"LEI","value":"HWUPKR0MPOU8FGXBT394"}]',
        '[]',
        // aliases (none), industry, its code system and code
        '[]',
        '',
        '',
        '',
      ].join('\t'),
    );
    for (const t of Object.keys(TABLES) as TableName[]) {
      const text = await readFile(join(out, stagingFile(t)), 'utf8');
      expect(text.split('\n').length - 2).toBe(result.counts[t]);
    }
    await expectCanonicalJson(out);
  });

  it('stages identifiers sorted by type and value, and addresses in file order, on their company', async () => {
    const c = byKey(await staged(out, 'Company'), 'vid');
    expect(c.get('A')!.identifiers).toBe(
      '[{"type":"LEI","value":"HWUPKR0MPOU8FGXBT394"},{"type":"Wikipedia","value":"Alpha, the company"}]',
    );
    expect(c.get('B')!.identifiers).toBe('[{"type":"LEI","value":"HWUPKR0MPOU8FGXBT394"}]');
    expect(c.get('G')!.identifiers).toBe('[]');
    expect(c.get('A')!.addresses).toBe(
      '[{"address_line":"Hauptstraße 1","city":"Berlin","region":"Berlin","postal_code":"10115","country":"Germany","type":"headquarters"},' +
        '{"address_line":"Werkstraße 2","city":"Hamburg","region":null,"postal_code":null,"country":"Germany","type":"plant"}]',
    );
    expect(c.get('D')!.addresses).toBe(
      '[{"address_line":null,"city":"Ulsan","region":null,"postal_code":null,"country":"Korea, Republic of","type":"headquarters"}]',
    );
    expect(c.get('B')!.addresses).toBe('[]');
  });

  it('stages evidence on its edge, newest first, with UTC timestamps', async () => {
    const e = byKey(await staged(out, 'Edge'), 'edge_id');
    expect(e.get('e1')!.evidences).toBe(
      '[["v2","2022-06-30T10:00:00Z","customs",null,null,null,null,null,"2022-07-01",null,null],' +
        '["v1","2021-01-01","text",null,null,null,null,null,null,null,null]]',
    );
    const evidences = (id: string): unknown => JSON.parse(e.get(id)!.evidences!);
    expect(evidences('e2')).toEqual([item('v3', '2019-05-05T00:00:00Z', { type: 'text' })]);
    expect(evidences('e3')).toEqual([item('v4', '2023-03-03T00:00:00Z', { type: 'text' })]);
    expect(evidences('e4')).toEqual([item('v5', '2018-01-01T00:00:00Z', { type: 'filing' })]);
    expect(evidences('e5')).toEqual([
      item('v6', '2020-02-02T00:00:00Z', { type: 'text', finalised_on: '2020-02-10T00:00:00Z' }),
    ]);
    expect(evidences('e6')).toEqual([item('v7', '2021-12-31T00:00:00Z', { type: 'customs' })]);
    expect(e.get('e7')!.evidences).toBe('[]');
  });
});

/** Every rejection of the bad fixture, in report order. */
const BAD: [string, number, string][] = [
  ['companies.csv', 5, 'duplicate vid "c1" (first at line 2)'],
  ['companies.csv', 6, 'column "name": missing value'],
  [
    'companies.csv',
    7,
    'column "vid": "c 4" is not a valid id (1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)',
  ],
  [
    'companies.csv',
    8,
    'column "incorporation_date": "2023-02-30" is not a date (YYYY-MM-DD or ISO 8601 with zone)',
  ],
  ['companies.csv', 9, 'column "ipo_date": "1850-01-01" is outside 1900-01-01 to 2100-12-31'],
  ['companies.csv', 10, 'column "is_active": "maybe" is not a boolean (true/false, 1/0, yes/no)'],
  ['companies.csv', 11, 'column "websites": "notaurl" is not a URL'],
  ['companies.csv', 12, 'column "domiciled_country": "1234" is not a country name'],
  ['companies.csv', 13, 'column "name": control character U+0007'],
  ['companies.csv', 14, 'expected 11 fields, found 3'],
  ['companies.csv', 15, 'malformed CSV: quote inside an unquoted field'],
  ['companies.csv', 16, 'column "domains": "bad_domain" is not a domain name'],
  ['companies.csv', 17, 'column "domains": empty element in list "a.com||b.com"'],
  ['companies.csv', 18, 'column "hq_phone_number": "call me" is not a phone number'],
  ['clusters.csv', 4, 'cluster "K2" has no parent row'],
  ['clusters.csv', 5, 'column "vid": company "c5" was rejected (companies.csv line 8)'],
  ['clusters.csv', 6, 'cluster "K3" has no parent: its parent row (line 5) was rejected'],
  ['clusters.csv', 7, 'company "c2" is already in cluster "K1" (line 3)'],
  ['clusters.csv', 8, 'cluster "K4" has 2 parent rows (lines 8, 9)'],
  ['clusters.csv', 9, 'cluster "K4" has 2 parent rows (lines 8, 9)'],
  ['clusters.csv', 10, 'cid_id "g5" is the vid of a company outside the cluster'],
  ['clusters.csv', 11, 'column "vid": unknown company "nobody"'],
  ['identifiers.csv', 4, 'duplicate identifier LEI:HWUPKR0MPOU8FGXBT394 for "c1" (first at line 2)'],
  ['identifiers.csv', 5, 'column "value": LEI "HWUPKR0MPOU8FGXBT395" has wrong check digits'],
  ['identifiers.csv', 7, 'column "value": ISIN "US0378331006" has a wrong check digit'],
  [
    'identifiers.csv',
    8,
    'column "type": "Ticker" is not an identifier type (LEI, PermID, Wikidata, Wikipedia, ISIN)',
  ],
  ['identifiers.csv', 9, 'column "value": "X123" is not a Wikidata id (Q followed by digits)'],
  ['identifiers.csv', 10, 'column "vid": company "c5" was rejected (companies.csv line 8)'],
  ['addresses.csv', 3, 'address has no values'],
  [
    'addresses.csv',
    4,
    'column "type": "bad type!" is not a valid code (1-64 of letters, digits, space _ . : / -)',
  ],
  ['addresses.csv', 5, 'column "vid": company "c7" was rejected (companies.csv line 10)'],
  ['relationships.csv', 4, 'supplier_id equals customer_id (self-relationship)'],
  ['relationships.csv', 5, 'column "confidence_score": "0" is outside (0, 1]'],
  ['relationships.csv', 6, 'column "confidence_score": "1.5" is outside (0, 1]'],
  ['relationships.csv', 7, 'column "confidence_score": "abc" is not a number'],
  ['relationships.csv', 8, 'column "customer_id": unknown company "nobody"'],
  ['relationships.csv', 9, 'column "supplier_id": company "c5" was rejected (companies.csv line 8)'],
  ['relationships.csv', 10, 'duplicate edge_id "e1" (first at line 2)'],
  ['relationships.csv', 11, 'column "hs_codes": "84x" is not an HS code'],
  ['relationships.csv', 12, 'column "latest_edge_date": "2101-01-01" is outside 1900-01-01 to 2100-12-31'],
  ['relationships.csv', 14, 'column "supplier_id": company "c11" was rejected (companies.csv line 14)'],
  ['evidence.csv', 3, 'column "url": "ftp://x.example.com/a" is not an http(s) URL'],
  ['evidence.csv', 4, 'column "edge_id": edge "e4" was rejected (relationships.csv line 5)'],
  ['evidence.csv', 5, 'column "edge_id": unknown edge "e99"'],
  ['evidence.csv', 6, 'column "date": missing value'],
  ['evidence.csv', 7, 'duplicate evidence id "v1" (first at line 2)'],
  [
    'evidence.csv',
    10,
    'column "date": "2022-01-01T25:00:00Z" is not a date (YYYY-MM-DD or ISO 8601 with zone)',
  ],
  ['evidence.csv', 11, 'malformed CSV: unexpected character after a closing quote'],
];

describe('stageImport on an id whose first row was rejected', () => {
  it('refuses a later row with that id, and what refers to the id', async () => {
    const dir = join(work, 'reused-ids');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'companies.csv'), 'vid,name\nc1,One\nc2,\nc3,Three\nc2,Two again\n');
    await writeFile(
      join(dir, 'relationships.csv'),
      'edge_id,supplier_id,customer_id,confidence_score\ne1,c3,c1,1.85\ne2,c3,c1,1\ne1,c1,c3,0.5\ne3,c2,c1,1\n',
    );
    await writeFile(
      join(dir, 'evidence.csv'),
      'id,edge_id,date\nv1,e1,2022-01-05\nv2,e2,2023-03-04\nv1,e2,2021-01-01\nv3,e2,20x\nv3,e2,2020-01-01\n',
    );
    const out = join(work, 'reused-ids-staging');
    const r = await stageImport(dir, out, { maxRejected: 100 });
    expect(r.rejected.map((x) => [x.file, x.line, x.reason])).toEqual([
      ['companies.csv', 3, 'column "name": missing value'],
      ['companies.csv', 5, 'duplicate vid "c2" (first at line 3, which was rejected)'],
      ['relationships.csv', 2, 'column "confidence_score": "1.85" is outside (0, 1]'],
      ['relationships.csv', 4, 'duplicate edge_id "e1" (first at line 2, which was rejected)'],
      ['relationships.csv', 5, 'column "supplier_id": company "c2" was rejected (companies.csv line 3)'],
      ['evidence.csv', 2, 'column "edge_id": edge "e1" was rejected (relationships.csv line 2)'],
      ['evidence.csv', 4, 'duplicate evidence id "v1" (first at line 2, which was rejected)'],
      ['evidence.csv', 5, 'column "date": "20x" is not a date (YYYY-MM-DD or ISO 8601 with zone)'],
      ['evidence.csv', 6, 'duplicate evidence id "v3" (first at line 5, which was rejected)'],
    ]);
    expect((await staged(out, 'Company')).map((c) => [c.vid, c.name])).toEqual([
      ['c1', 'One'],
      ['c3', 'Three'],
    ]);
    const edges = await staged(out, 'Edge');
    expect(edges.map((e) => [e.edge_id, e.supplier_id])).toEqual([['e2', 'c3']]);
    expect((JSON.parse(edges[0]!.evidences!) as string[][]).map((e) => e[0])).toEqual(['v2']);
  });
});

describe('stageImport on a dataset with bad rows', () => {
  let out: string;
  let result: Awaited<ReturnType<typeof stageImport>>;
  beforeAll(async () => {
    out = join(work, 'bad-staging');
    result = await stageImport(join(FIXTURES, 'bad'), out, { maxRejected: 1000 });
  });

  it('rejects each bad row with its file, physical line and reason', () => {
    expect(result.rejected.map((r) => [r.file, r.line, r.reason])).toEqual(BAD);
  });

  it('loads the good rows, fixing free-text whitespace', async () => {
    const c = byKey(await staged(out, 'Company'), 'vid');
    expect([...c.keys()].sort()).toEqual(['c1', 'c16', 'c2', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6']);
    expect(c.get('c2')!.description).toBe('Line one line two');
    expect(c.get('c16')!.description).toBe('has tab');
    expect(c.get('c1')!.domains).toBe('[good.com,good-group.com]');
    expect(c.get('c1')!.websites).toBe('[https://www.good.com]');
    expect(c.get('c1')!.incorporation_date).toBe('1990-05-01T00:00:00Z');
    expect(c.get('c2')!.cid_id).toBe('K1');
    expect(c.get('g3')!.cid_id).toBe('g3');
    expect((await staged(out, 'Edge')).map((e) => e.edge_id)).toEqual(['e1', 'e2', 'e11']);
    expect(byKey(await staged(out, 'Edge'), 'edge_id').get('e2')!.latest_edge_date).toBe(
      '2021-01-01T08:00:00Z',
    );
    // The duplicate id v1 sends the evidence through the exact second pass.
    const e = byKey(await staged(out, 'Edge'), 'edge_id');
    expect(e.get('e1')!.evidences).toBe(
      '[["v1","2022-01-01","text","https://news.example.com/a","news.example.com",null,null,"{\\"k\\":1}",null,null,null]]',
    );
    expect(JSON.parse(e.get('e1')!.evidences!)).toEqual([
      item('v1', '2022-01-01T00:00:00Z', {
        type: 'text',
        url: 'https://news.example.com/a',
        domain: 'news.example.com',
        metadata: '{"k":1}',
      }),
    ]);
    expect(JSON.parse(e.get('e2')!.evidences!)).toEqual([
      item('v6', '2022-03-03T00:00:00Z', {
        type: 'text',
        url: 'https://news.example.com/b',
        domain: 'news.example.com',
        metadata: 'multi line meta',
      }),
    ]);
    expect(JSON.parse(e.get('e11')!.evidences!)).toEqual([
      item('v9', '2022-01-01T00:00:00Z', { type: 'text' }),
    ]);
    expect(result.items).toEqual({ evidence: 3, identifiers: 4, addresses: 1 });
    expect(JSON.parse(c.get('c1')!.identifiers!)).toEqual([
      { type: 'ISIN', value: 'US0378331005' },
      { type: 'LEI', value: 'HWUPKR0MPOU8FGXBT394' },
      { type: 'Wikipedia', value: 'Good One, Inc.' },
    ]);
    expect(result.inputRows['companies.csv']).toBe(23);
    expect((await readdir(out)).sort()).toEqual(STAGED_FILES);
  });

  it('never lets a control character or a line break inside a field into a staging file', async () => {
    for (const t of Object.keys(TABLES) as TableName[]) {
      const text = await readFile(join(out, stagingFile(t)), 'utf8');
      // Tabs separate the fields and line feeds end the rows; nothing else may be a control character.
      // eslint-disable-next-line no-control-regex -- the test looks for control characters
      expect(/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)).toBe(false);
      expect(text.split('\n').length - 2).toBe(result.counts[t]);
      // staged() checks that every row has exactly the header's number of fields.
      expect((await staged(out, t)).length).toBe(result.counts[t]);
    }
    await expectCanonicalJson(out);
  });
});

describe('stageImport aborts', () => {
  async function dataset(name: string, files: Record<string, string>): Promise<string> {
    const dir = join(work, name);
    await rm(dir, { recursive: true, force: true });
    await cp(join(FIXTURES, 'tiny'), dir, { recursive: true });
    for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
    return dir;
  }

  async function abort(input: string, maxRejected?: number): Promise<ImportAbortedError> {
    const out = join(work, 'abort-staging');
    await rm(out, { recursive: true, force: true });
    const e: unknown = await stageImport(input, out, { maxRejected }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(ImportAbortedError);
    // Neither table files nor the temporary evidence buckets are left behind.
    expect(existsSync(out) ? await readdir(out) : []).toEqual([]);
    return e as ImportAbortedError;
  }

  it('when more rows are rejected than allowed, with the rejections so far', async () => {
    const e = await abort(join(FIXTURES, 'bad'), 3);
    expect(e.rejected.map((r: RejectedRow) => r.line)).toEqual([5, 6, 7, 8]);
    expect(e.message).toMatch(/^more than 3 rejected rows /);
    const none = await abort(join(FIXTURES, 'bad'), 0);
    expect(none.rejected).toHaveLength(1);
  });

  it('while reading evidence, removing the evidence buckets', async () => {
    const dir = await dataset('bad-evidence', {
      'evidence.csv':
        'id,edge_id,date\nv1,e1,2021-01-01\nv2,e1,2021-02-30\nv3,e2,2021-01-01\nv4,e9,2021-01-01\n',
    });
    const e = await abort(dir, 1);
    expect(e.rejected.map((r) => [r.file, r.line])).toEqual([
      ['evidence.csv', 3],
      ['evidence.csv', 5],
    ]);
  });

  it('when a file is UTF-16, saying so', async () => {
    const dir = join(work, 'utf16');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'companies.csv'), Buffer.from('\ufeffvid,name\nc1,One\n', 'utf16le'));
    await writeFile(join(dir, 'relationships.csv'), 'edge_id,supplier_id,customer_id\n');
    expect((await abort(dir)).message).toBe(
      'companies.csv: is not UTF-8 (its header holds NUL characters, as UTF-16 text does): save it as UTF-8',
    );
  });

  it('when a required file is missing', async () => {
    const dir = await dataset('no-relationships', {});
    await rm(join(dir, 'relationships.csv'));
    expect((await abort(dir)).message).toBe('required file relationships.csv is missing');
  });

  it('when a column is unknown, repeated or required but missing', async () => {
    expect(
      (await abort(await dataset('unknown-col', { 'clusters.csv': 'cid_id,vid,is_parent,size\n' }))).message,
    ).toBe('clusters.csv: unknown column "size" (known: cid_id, vid, is_parent)');
    expect(
      (await abort(await dataset('twice-col', { 'clusters.csv': 'cid_id,vid,vid,is_parent\n' }))).message,
    ).toBe('clusters.csv: column "vid" appears twice');
    expect((await abort(await dataset('missing-col', { 'clusters.csv': 'cid_id,vid\n' }))).message).toBe(
      'clusters.csv: required column "is_parent" is missing',
    );
    expect((await abort(await dataset('empty-file', { 'companies.csv': '' }))).message).toBe(
      'companies.csv: the file is empty (no header row)',
    );
  });

  it('skips rows of empty fields as blank lines, and still rejects a short row after them', async () => {
    const clusters = await readFile(join(FIXTURES, 'tiny', 'clusters.csv'), 'utf8');
    const dir = await dataset('comma-rows', {
      'clusters.csv': `${clusters.trimEnd()}\n,,\n , ,\r\n,\nK9,Z\n`,
    });
    const r = await stageImport(dir, join(work, 'comma-rows-staging'), { maxRejected: 5 });
    const last = clusters.trimEnd().split('\n').length;
    // ",,", " , ," and "," hold nothing; "K9,Z" is a field short, and told at its own line.
    expect(r.rejected).toEqual([
      { file: 'clusters.csv', line: last + 4, reason: 'expected 3 fields, found 2' },
    ]);
  });

  it('reads an empty optional file as no rows, with a warning', async () => {
    const dir = await dataset('empty-optional', { 'clusters.csv': '', 'evidence.csv': '\ufeff\n' });
    const r = await stageImport(dir, join(work, 'empty-optional-staging'));
    expect(r.rejected).toEqual([]);
    expect(r.items.evidence).toBe(0);
    expect(r.warnings.map((w) => [w.file, w.line, w.reason]).sort()).toEqual([
      ['clusters.csv', 1, 'the file is empty (no header row); read as no rows'],
      ['evidence.csv', 1, 'the file is empty (no header row); read as no rows'],
    ]);
  });

  it('and leaves an earlier complete staging directory without its marker', async () => {
    const out = join(work, 'reused-staging');
    await stageImport(join(FIXTURES, 'tiny'), out);
    expect(existsSync(join(out, SUCCESS_MARKER))).toBe(true);
    await expect(stageImport(join(FIXTURES, 'bad'), out, { maxRejected: 1 })).rejects.toBeInstanceOf(
      ImportAbortedError,
    );
    expect(existsSync(join(out, SUCCESS_MARKER))).toBe(false);
  });
});

describe('stageImport optional files and progress', () => {
  it('stages without the optional files and reports progress', async () => {
    const dir = join(work, 'minimal');
    await rm(dir, { recursive: true, force: true });
    await cp(join(FIXTURES, 'tiny'), dir, { recursive: true });
    for (const f of ['evidence.csv', 'identifiers.csv', 'addresses.csv', 'clusters.csv'])
      await rm(join(dir, f));
    const phases = new Set<string>();
    const r = await stageImport(dir, join(work, 'minimal-staging'), {
      onProgress: (p) => phases.add(`${p.phase}:${p.file ?? ''}`),
    });
    expect(r.rejected).toEqual([]);
    expect(r.items).toEqual({ evidence: 0, identifiers: 0, addresses: 0 });
    // Without clusters.csv every company is a cluster of its own: no cluster edge is stored.
    expect(r.counts.CLUSTER_SUPPLIES).toBe(0);
    expect(phases.has('read:companies.csv')).toBe(true);
    expect(phases.has('write:Edge')).toBe(true);
    const c = byKey(await staged(join(work, 'minimal-staging'), 'Company'), 'vid');
    expect(c.get('B')!.cid_id).toBe('B');
    expect(c.get('A')!.count_supplier_evidence).toBe('0');
    expect([c.get('A')!.identifiers, c.get('A')!.addresses]).toEqual(['[]', '[]']);
    const e = byKey(await staged(join(work, 'minimal-staging'), 'Edge'), 'edge_id');
    expect(e.get('e1')!.evidences).toBe('[]');
    expect((await readdir(join(work, 'minimal-staging'))).sort()).toEqual(STAGED_FILES);
  });
});

describe('stageImport list and JSON values', () => {
  let out: string;
  let result: Awaited<ReturnType<typeof stageImport>>;
  beforeAll(async () => {
    const dir = join(work, 'lists');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'companies.csv'),
      [
        'vid,name,domains,websites',
        `a,A,acme.com|acme-group.com|acme.com,"https://acme.com/a,b|https://acme.com/q?x=[1]&y={2}|https://acme.com/it's|https://acme.com/back\\slash|https://acme.com/""quoted"""`,
        'b,B,"a,b.com",',
        'c,C,,http://[::1]/x',
        'd,D,,',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'relationships.csv'),
      'edge_id,supplier_id,customer_id,confidence_score,hs_codes\nr1,a,d,0.5,8471|8471.30\nr2,d,a,0.5,84[71]\n',
    );
    await writeFile(
      join(dir, 'evidence.csv'),
      [
        'id,edge_id,date,type,url,metadata,status_id,provided_by_customer',
        'x1,r1,2021-01-01,"news, web",,,,',
        'x3,r1,2021-01-01,text,,,7,no',
        'x2,r1,2021-01-01T00:00:00.500Z,text,"https://n.example.com/a?q=""x""","say ""hi"" \\ bye",,',
        'x0,r1,2021-01-01,text,,,,',
        '',
      ].join('\n'),
    );
    out = join(work, 'lists-staging');
    result = await stageImport(dir, out, { maxRejected: 1000 });
  });

  it('rejects list elements that a staged list cannot hold, with the reason', () => {
    expect(result.rejected.map((r) => [r.file, r.line, r.reason])).toEqual([
      ['companies.csv', 3, 'column "domains": "a,b.com" is not a domain name'],
      [
        'companies.csv',
        4,
        `column "websites": "http://[::1]/x" cannot be a list element: it holds one of , ' " [ ] { } \\ before its path`,
      ],
      ['relationships.csv', 3, 'column "hs_codes": "84[71]" is not an HS code'],
      [
        'evidence.csv',
        2,
        'column "type": "news, web" is not a valid code (1-64 of letters, digits, space _ . : / -)',
      ],
    ]);
  });

  it('stages lists as list literals, percent-encoding what a website URL cannot hold there', async () => {
    const c = byKey(await staged(out, 'Company'), 'vid');
    expect(c.get('a')!.domains).toBe('[acme.com,acme-group.com]');
    expect(c.get('a')!.websites).toBe(
      '[https://acme.com/a%2Cb,https://acme.com/q?x=%5B1%5D&y=%7B2%7D,https://acme.com/it%27s,https://acme.com/back%5Cslash,https://acme.com/%22quoted%22]',
    );
    expect([c.get('d')!.domains, c.get('d')!.websites]).toEqual(['[]', '[]']);
    const text = await readFile(join(out, stagingFile('Company')), 'utf8');
    expect(text).toContain('\t[acme.com,acme-group.com]\t[https://acme.com/a%2Cb,');
    expect(byKey(await staged(out, 'SUPPLIES'), 'edge_id').get('r1')!.evidence_types).toBe('[text]');
  });

  it('writes JSON escapes as they are, with no file-level quoting, and sorts to the millisecond', async () => {
    const evidences = byKey(await staged(out, 'Edge'), 'edge_id').get('r1')!.evidences!;
    expect(evidences).toContain(
      '"https://n.example.com/a?q=\\"x\\"","n.example.com",null,null,"say \\"hi\\" \\\\ bye"',
    );
    expect(JSON.parse(evidences)).toEqual([
      item('x2', '2021-01-01T00:00:00.500Z', {
        type: 'text',
        url: 'https://n.example.com/a?q="x"',
        domain: 'n.example.com',
        metadata: 'say "hi" \\ bye',
      }),
      item('x0', '2021-01-01T00:00:00Z', { type: 'text' }),
      item('x3', '2021-01-01T00:00:00Z', { type: 'text', status_id: 7, provided_by_customer: false }),
    ]);
    await expectCanonicalJson(out);
  });
});

describe('stageImport with evidence not grouped by edge', () => {
  /** Evidence lines in an order unrelated to their edges: by a hash of the whole line. */
  function interleave(text: string): string {
    const [head, ...lines] = text.trimEnd().split('\n');
    const key = (s: string): number => {
      let h = 2166136261;
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
      return h >>> 0;
    };
    lines.sort((a, b) => key(a) - key(b));
    return `${[head, ...lines].join('\n')}\n`;
  }

  it('puts every item on its edge, sorted, exactly as for grouped input', async () => {
    const grouped = join(work, 'grouped');
    await generateDataset({ companies: 800, seed: 5, outDir: grouped });
    const shuffled = join(work, 'shuffled');
    await cp(grouped, shuffled, { recursive: true });
    const evidenceText = await readFile(join(grouped, 'evidence.csv'), 'utf8');
    const mixed = interleave(evidenceText);
    expect(mixed).not.toBe(evidenceText);
    await writeFile(join(shuffled, 'evidence.csv'), mixed);

    const a = await stageImport(grouped, join(work, 'grouped-staging'), { maxRejected: 0 });
    const b = await stageImport(shuffled, join(work, 'shuffled-staging'), { maxRejected: 0 });
    expect(b.items).toEqual(a.items);
    for (const t of Object.keys(TABLES) as TableName[]) {
      const x = await readFile(join(work, 'grouped-staging', stagingFile(t)), 'utf8');
      const y = await readFile(join(work, 'shuffled-staging', stagingFile(t)), 'utf8');
      expect(y === x).toBe(true);
    }

    // Complete and sorted, against the input file.
    const perEdge = new Map<string, number>();
    for (const line of evidenceText.trimEnd().split('\n').slice(1)) {
      const edge = line.split(',')[1]!;
      perEdge.set(edge, (perEdge.get(edge) ?? 0) + 1);
    }
    let total = 0;
    for (const row of await staged(join(work, 'shuffled-staging'), 'Edge')) {
      const items = (JSON.parse(row.evidences!) as [string, string][]).map(([id, date]) => ({ id, date }));
      expect(items.length).toBe(perEdge.get(row.edge_id!) ?? 0);
      total += items.length;
      for (let i = 1; i < items.length; i++) {
        const [p, q] = [items[i - 1]!, items[i]!];
        expect(p.date > q.date || (p.date === q.date && p.id < q.id)).toBe(true);
      }
    }
    expect(total).toBe(a.items.evidence);
    expect((await readdir(join(work, 'shuffled-staging'))).sort()).toEqual(STAGED_FILES);
  }, 60000);
});

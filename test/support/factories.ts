import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type {
  CompanyCore,
  CompanyProfile,
  EdgeRecord,
  Evidence,
  RelationshipItem,
} from '../../src/domain/model';
import type { SearchRow } from '../../src/domain/search-row';
import type { TierCompany } from '../../src/domain/tier-walk';

/**
 * Test data builders. Each returns a complete, valid value with plain defaults
 * and takes the fields a test cares about as overrides, so a test states only
 * what it is about. Ids come from a counter, so two builds never collide.
 */

let seq = 0;
/** A fresh id with `prefix`: `c1`, `c2`, ... */
export function nextId(prefix: string): string {
  seq += 1;
  return `${prefix}${seq}`;
}

/** The search-result fields of a company as the search index keeps them. */
export function buildCompanyCore(
  vid: string,
  name: string,
  overrides: Partial<CompanyCore> = {},
): CompanyCore {
  return {
    vid,
    cid_id: vid,
    name,
    company_legal_name: null,
    description: null,
    domains: [],
    websites: [],
    count_supplier_evidence: 0,
    count_customer_evidence: 0,
    count_customers: 0,
    count_suppliers: 0,
    ...overrides,
  };
}

/** A company as the store hands it to the search index: searched by default, no relationships, no details. */
export function buildSearchRow(vid: string, name: string, overrides: Partial<SearchRow> = {}): SearchRow {
  return {
    core: buildCompanyCore(vid, name),
    vid,
    name,
    searchedByDefault: true,
    isClusterParent: false,
    aliases: [],
    industry: null,
    industryCode: null,
    industryCodeSystem: null,
    degree: 0,
    country: null,
    hosts: [],
    cities: [],
    identifierValues: [],
    ...overrides,
  };
}

/**
 * Company `i` of a set with every search key filled in some of them, the same each time: named `name`,
 * aliased `alias` (every fourth), with an industry (every other), the countries in turn, one of 50
 * hosts, one of two cities and an identifier of its own.
 */
export function buildKeyedSearchRow(
  i: number,
  name: string,
  alias: string,
  countries: readonly (string | null)[],
): SearchRow {
  return buildSearchRow(`v${i}`, name, {
    searchedByDefault: i % 5 !== 0,
    isClusterParent: i % 3 === 0,
    aliases: i % 4 === 0 ? [alias] : [],
    industry: i % 2 === 0 ? 'Steel making' : null,
    industryCode: i % 2 === 0 ? '331110' : null,
    industryCodeSystem: i % 2 === 0 ? 'NAICS' : null,
    degree: (i * 37) % 101,
    country: countries[i % countries.length]!,
    hosts: [`site${i % 50}.example`],
    cities: i % 3 === 0 ? ['Hamburg'] : ['Osaka'],
    identifierValues: [`LEI${String(i).padStart(6, '0')}`],
  });
}

/** A company as a tier walk reports it: tier 1, named after its vid, its own cluster, no details. */
export function buildTierCompany(overrides: Partial<TierCompany> = {}): TierCompany {
  const vid = overrides.vid ?? nextId('c');
  return {
    vid,
    tier: 1,
    name: vid,
    company_legal_name: null,
    cid_id: vid,
    domiciled_country: null,
    websites: [],
    is_public: null,
    industry: null,
    industry_code_system: null,
    industry_code: null,
    count_suppliers: 0,
    count_customers: 0,
    ...overrides,
  };
}

export function buildCompany(overrides: Partial<CompanyProfile> = {}): CompanyProfile {
  const vid = overrides.vid ?? nextId('c');
  return {
    vid,
    cid_id: vid,
    name: `Company ${vid}`,
    company_legal_name: null,
    description: null,
    domains: [],
    websites: [],
    count_supplier_evidence: 0,
    count_customer_evidence: 0,
    count_customers: 0,
    count_suppliers: 0,
    identifiers: [],
    addresses: [],
    domiciled_country: null,
    incorporated_country: null,
    incorporation_date: null,
    ipo_date: null,
    is_active: null,
    is_freight_forwarder: null,
    is_public: null,
    hq_phone_number: null,
    is_cluster_parent: false,
    aliases: [],
    industry: null,
    industry_code_system: null,
    industry_code: null,
    ...overrides,
  };
}

export function buildEvidence(overrides: Partial<Evidence> = {}): Evidence {
  return {
    id: nextId('v'),
    date: '2022-01-01T00:00:00.000Z',
    type: 'text',
    url: null,
    domain: null,
    status_id: null,
    provided_by_customer: null,
    metadata: null,
    finalised_on: null,
    created_on: null,
    last_modified_on: null,
    ...overrides,
  };
}

export function buildEdge(overrides: Partial<EdgeRecord> = {}): EdgeRecord {
  return {
    edge_id: nextId('e'),
    supplier_id: 'supplier',
    customer_id: 'customer',
    label: 'supply',
    status_code: null,
    latest_edge_date: null,
    latest_finalized_edge_date: null,
    last_modified_on: null,
    confidence_score: 0.5,
    hs_codes: [],
    evidences: [],
    ...overrides,
  };
}

export function buildRelationshipItem(
  overrides: { counterpart?: Partial<RelationshipItem['counterpart']> } & Partial<
    Omit<RelationshipItem, 'counterpart'>
  > = {},
): RelationshipItem {
  const vid = overrides.counterpart?.vid ?? nextId('c');
  const edgeId = nextId('e');
  return {
    evidences: { evidence_types: [] },
    ...overrides,
    counterpart: {
      vid,
      name: `Company ${vid}`,
      company_legal_name: null,
      description: null,
      domains: [],
      country: null,
      count_supplier_evidence: 0,
      count_customer_evidence: 0,
      count_customers: 0,
      count_suppliers: 0,
      ...overrides.counterpart,
    },
    relationship: overrides.relationship ?? {
      confidence_score: 0.5,
      latest_relationship_date: null,
      relationship_type: 'supply',
      relationship_id: edgeId,
      edge_ids: [edgeId],
    },
  };
}

/** One row of an import file: column name to cell text (missing columns are empty). */
export type ImportRow = Record<string, string | number | boolean | null | undefined>;

/** The files of an import directory (docs/import-format.md), each a list of rows. */
export interface ImportFiles {
  companies: ImportRow[];
  relationships?: ImportRow[];
  evidence?: ImportRow[];
  identifiers?: ImportRow[];
  addresses?: ImportRow[];
  clusters?: ImportRow[];
}

/** A `companies.csv` row; `vid` and `name` are filled in when not given. */
export function companyRow(overrides: ImportRow = {}): ImportRow {
  const vid = String(overrides.vid ?? nextId('c'));
  return { vid, name: `Company ${vid}`, ...overrides };
}

/** A `relationships.csv` row between two vids. */
export function relationshipRow(supplier: string, customer: string, overrides: ImportRow = {}): ImportRow {
  return {
    edge_id: nextId('e'),
    supplier_id: supplier,
    customer_id: customer,
    confidence_score: 0.5,
    ...overrides,
  };
}

/** An `evidence.csv` row of an edge. */
export function evidenceRow(edgeId: string, overrides: ImportRow = {}): ImportRow {
  return { id: nextId('v'), edge_id: edgeId, date: '2022-01-01', type: 'text', ...overrides };
}

function csvCell(v: ImportRow[string]): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Rows as CSV text: the header is the union of the rows' columns, in first-seen order. */
export function toCsv(rows: ImportRow[]): string {
  const columns: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  const lines = [columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c])).join(','))];
  return `${lines.join('\n')}\n`;
}

/**
 * Appends rows to a CSV file with a header row (an import file, a generated one among them), each
 * written in the file's own column order, columns it lacks left empty.
 */
export function appendRows(file: string, rows: ImportRow[]): void {
  const columns = fs.readFileSync(file, 'utf8').split('\n', 1)[0]!.split(',');
  const ordered = rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? ''])));
  fs.appendFileSync(file, toCsv(ordered).split('\n').slice(1).join('\n'));
}

/** One column of a CSV file with a header row (an import file), top to bottom. */
export function csvColumn(file: string, name: string): string[] {
  return parse<Record<string, string>>(fs.readFileSync(file, 'utf8'), { columns: true }).map((r) => r[name]!);
}

/**
 * Writes an import directory: one CSV per given file. `relationships.csv` is
 * required by the format, so it is written (header only) even when empty.
 */
export function writeImportDir(dir: string, files: ImportFiles): string {
  fs.mkdirSync(dir, { recursive: true });
  const all: Record<string, ImportRow[] | undefined> = { relationships: [], ...files };
  for (const [name, rows] of Object.entries(all)) {
    if (!rows) continue;
    const text =
      rows.length > 0
        ? toCsv(rows)
        : name === 'relationships'
          ? 'edge_id,supplier_id,customer_id,confidence_score\n'
          : '';
    if (text) fs.writeFileSync(path.join(dir, `${name}.csv`), text);
  }
  return dir;
}

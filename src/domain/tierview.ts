import { countryCode } from './countries';
import { CsvBytes } from './csv-text';
import { listField } from './lists';
import { badRequest } from './errors';
import type { FieldError } from './errors';
import type { Direction } from './model';
import type { TierCompany, TierRelationship } from './tier-walk';

/** A validated tier-view request (spec 4.5). */
export interface TierViewRequest {
  root_nodes: string;
  num_tiers: number;
  direction: 'supplier' | 'customer';
  /** `YYYY-MM-DD`; null: every relationship is walked whatever its evidence dates. */
  min_evid_date: string | null;
  output_multiple_tables: boolean;
  /** Where to POST the completion notice; checked against the allow-list by the caller. */
  callback_url: string | null;
  // Filters beyond the spec; absent when the client did not send them, so a plain request stays as it was.
  /** Only relationships with at least this confidence (0 to 1) are walked. */
  min_confidence?: number;
  /** ISO 3166 alpha-2 codes: only companies domiciled in these are walked into. */
  countries?: string[];
  /** Per tier, only the companies reached through the strongest relationships are kept and walked onward. */
  max_companies_per_tier?: number;
  /** Each file starts with a UTF-8 byte order mark, by which Excel recognises UTF-8; absent: no mark. */
  csv_bom?: boolean;
}

/** Bound of `max_companies_per_tier`: a capped tier is ranked in memory. */
export const MAX_COMPANIES_PER_TIER = 100_000;
/** Bound of `countries`: there are fewer than 250 codes, so more entries can only repeat them. */
export const MAX_COUNTRIES = 250;

export const TIERVIEW_FIELDS = [
  'root_nodes',
  'num_tiers',
  'direction',
  'min_evid_date',
  'output_multiple_tables',
  'callback_url',
  'min_confidence',
  'countries',
  'max_companies_per_tier',
  'csv_bom',
] as const;

/** Every id an import accepts (see import/format.ts) and those seeds wrote before it. */
const VID = /^[A-Za-z0-9._-]{1,64}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function realDay(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s && s >= '0001-01-01';
}

/**
 * Validates a tier-view request as clients send it: values as strings (the
 * spec's form), or as JSON numbers and booleans. Every problem is reported at
 * once, each naming its field as the GraphQL argument (`num_tiers`); REST names
 * it where it was sent (`body.num_tiers`, see rest/field-names.ts).
 */
export function parseTierViewRequest(body: unknown, maxTiers: number): TierViewRequest {
  const errors: FieldError[] = [];
  const bad = (field: string, reason: string) => errors.push({ field, reason });
  // REST refuses a body that is no object before it gets here (rest/request-body.ts), and GraphQL's
  // input type is one.
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest([{ field: 'input', reason: 'must be an object' }]);
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(TIERVIEW_FIELDS as readonly string[]).includes(key)) bad(key, 'is not a known field');
  }

  let root = '';
  if (b.root_nodes === undefined || b.root_nodes === null || b.root_nodes === '')
    bad('root_nodes', 'is required: the vid of the root company');
  else if (typeof b.root_nodes !== 'string')
    bad('root_nodes', 'must be a string: the vid of one root company (one root per run)');
  else if (b.root_nodes.trim() === '') bad('root_nodes', 'is required: the vid of the root company');
  // As published (the OpenAPI pattern): nothing around the vid or the digits, not even spaces.
  else if (!VID.test(b.root_nodes))
    bad('root_nodes', 'must be one company vid (letters, digits, . _ or -, nothing around it)');
  else root = b.root_nodes;

  let tiers = 0;
  const t = b.num_tiers;
  const tierText = typeof t === 'number' ? String(t) : typeof t === 'string' ? t : null;
  if (t === undefined || t === null || t === '') bad('num_tiers', 'is required');
  else if (tierText === null || !/^\d+$/.test(tierText))
    bad('num_tiers', `must be an integer from 1 to ${maxTiers}`);
  else {
    tiers = Number(tierText);
    if (tiers < 1 || tiers > maxTiers) bad('num_tiers', `must be an integer from 1 to ${maxTiers}`);
  }

  let direction: 'supplier' | 'customer' = 'supplier';
  if (b.direction === 'supplier' || b.direction === 'customer') direction = b.direction;
  else if (b.direction === undefined) bad('direction', "is required: 'supplier' or 'customer'");
  else bad('direction', "must be 'supplier' or 'customer'");

  let minDate: string | null = null;
  if (b.min_evid_date !== undefined && b.min_evid_date !== null && b.min_evid_date !== '') {
    if (typeof b.min_evid_date !== 'string' || !realDay(b.min_evid_date))
      bad('min_evid_date', 'must be a calendar date YYYY-MM-DD');
    else minDate = b.min_evid_date;
  }

  let multiple = false;
  const m = b.output_multiple_tables;
  if (m === 'yes' || m === true) multiple = true;
  else if (m === 'no' || m === false || m === undefined || m === null) multiple = false;
  else bad('output_multiple_tables', "must be 'yes' or 'no'");

  let bom: boolean | null = null;
  const bm = b.csv_bom;
  if (bm === 'yes' || bm === true) bom = true;
  else if (bm === 'no' || bm === false) bom = false;
  else if (bm !== undefined && bm !== null) bad('csv_bom', "must be 'yes' or 'no' (or true or false)");

  let callback: string | null = null;
  if (b.callback_url !== undefined && b.callback_url !== null) {
    if (typeof b.callback_url !== 'string' || b.callback_url === '') bad('callback_url', 'must be a URL');
    else callback = b.callback_url;
  }

  const filters = parseFilters(b, bad);

  if (errors.length > 0) throw badRequest(errors);
  return {
    root_nodes: root,
    num_tiers: tiers,
    direction,
    min_evid_date: minDate,
    output_multiple_tables: multiple,
    callback_url: callback,
    ...filters,
    // Only when sent, so a request without it is stored and answered exactly as before.
    ...(bom === null ? {} : { csv_bom: bom }),
  };
}

/**
 * The request as it walks and writes: a filter sent with the value that changes nothing (a
 * `min_confidence` of 0, `csv_bom` false) left out, as if not sent. Two requests with the same
 * effective request give the same files, so a retry under one Idempotency-Key may spell a default
 * out or leave it out.
 */
export function effectiveRequest(r: TierViewRequest): TierViewRequest {
  const { min_confidence, csv_bom, ...rest } = r;
  return { ...rest, ...(min_confidence ? { min_confidence } : {}), ...(csv_bom ? { csv_bom } : {}) };
}

/** A number sent as a JSON number or, like the spec's fields, as its text. */
function numberOf(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return null;
}

const absent = (v: unknown) => v === undefined || v === null || v === '';

/** The optional filters beyond the spec; only those sent appear in the result. */
function parseFilters(
  b: Record<string, unknown>,
  bad: (field: string, reason: string) => void,
): Pick<TierViewRequest, 'min_confidence' | 'countries' | 'max_companies_per_tier'> {
  const out: Pick<TierViewRequest, 'min_confidence' | 'countries' | 'max_companies_per_tier'> = {};

  if (!absent(b.min_confidence)) {
    const n = numberOf(b.min_confidence);
    if (n === null || n < 0 || n > 1) bad('min_confidence', 'must be a number from 0 to 1');
    else out.min_confidence = n;
  }

  if (!absent(b.countries)) {
    // A list, or one text of comma-separated entries (as a form or a query string would send it).
    const raw = typeof b.countries === 'string' ? b.countries.split(',') : b.countries;
    if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_COUNTRIES) {
      bad('countries', `must be a list of 1 to ${MAX_COUNTRIES} country codes or names`);
    } else {
      const codes = new Set<string>();
      const unknown: string[] = [];
      for (const entry of raw) {
        const code = typeof entry === 'string' ? countryCode(entry) : null;
        if (code === null) unknown.push(typeof entry === 'string' ? `'${entry.trim()}'` : String(entry));
        else codes.add(code);
      }
      if (unknown.length > 0)
        bad(
          'countries',
          `unknown countries: ${unknown.slice(0, 5).join(', ')} (ISO 3166 codes or English names)`,
        );
      else out.countries = [...codes].sort();
    }
  }

  if (!absent(b.max_companies_per_tier)) {
    const n = numberOf(b.max_companies_per_tier);
    if (n === null || !Number.isInteger(n) || n < 1 || n > MAX_COMPANIES_PER_TIER)
      bad('max_companies_per_tier', `must be an integer from 1 to ${MAX_COMPANIES_PER_TIER}`);
    else out.max_companies_per_tier = n;
  }
  return out;
}

/** The store's name for a request direction. */
export function walkDirection(direction: TierViewRequest['direction']): Direction {
  return direction === 'supplier' ? 'suppliers' : 'customers';
}

/** Columns of the single-table export, in the order of gap-decisions.md. */
export const TIERVIEW_COLUMNS = [
  'root_node_name',
  'root_node_vid',
  'customer_tier',
  'customer_delivery_name',
  'customer_vid',
  'customer_cid',
  'supplier_tier',
  'supplier_delivery_name',
  'supplier_vid',
  'supplier_cid',
  'edge_ids',
  'cluster_edge_id',
  'edge_score',
  'hs_codes',
  'status_code',
  'evidence_types',
  'latest_evidence_date',
] as const;

/** Relationships table of the three-table export: the single-table columns without company details. */
export const RELATIONSHIP_COLUMNS: readonly string[] = TIERVIEW_COLUMNS.filter(
  (c) => !c.endsWith('_name') && !c.endsWith('_cid'),
);

export const TIER_COLUMNS = ['vid', 'tier'] as const;

export const COMPANY_COLUMNS = [
  'vid',
  'tier',
  'name',
  'company_legal_name',
  'delivery_name',
  'cid_id',
  'domiciled_country',
  'websites',
  'is_public',
  'count_suppliers',
  'count_customers',
  'industry',
  'industry_code_system',
  'industry_code',
] as const;

export type CsvRecord = Record<string, string | number | null>;

/** The legal name where present, else the name. */
export function deliveryName(c: Pick<TierCompany, 'name' | 'company_legal_name'>): string {
  return c.company_legal_name && c.company_legal_name.trim() !== '' ? c.company_legal_name : c.name;
}

/**
 * One export row for a relationship between tier `tier` and `tier + 1`. In the
 * supplier direction the customer is the nearer company; in the customer
 * direction the supplier is.
 */
export function tierviewRecord(root: TierCompany, rel: TierRelationship): CsvRecord {
  const { supplier, customer } = rel;
  return {
    root_node_name: deliveryName(root),
    root_node_vid: root.vid,
    customer_tier: customer.tier,
    customer_delivery_name: deliveryName(customer),
    customer_vid: customer.vid,
    customer_cid: customer.cid_id,
    supplier_tier: supplier.tier,
    supplier_delivery_name: deliveryName(supplier),
    supplier_vid: supplier.vid,
    supplier_cid: supplier.cid_id,
    edge_ids: listField([rel.edge_id]),
    cluster_edge_id: rel.cluster_edge_id,
    edge_score: rel.confidence_score,
    hs_codes: listField(rel.hs_codes),
    status_code: rel.status_code,
    evidence_types: listField(rel.evidence_types),
    latest_evidence_date: rel.latest_evidence_date,
  };
}

/**
 * The CSV records of one single-table export, as `csvRecord(TIERVIEW_COLUMNS, tierviewRecord(root, rel))`
 * writes them, built without the record and as bytes (CsvBytes): the root's fields, each company's
 * (tier, delivery name, vid, cid) and each list the store shares between rows (a frozen array) are
 * encoded once and copied into every row that shows them. An export writes hundreds of thousands of
 * rows, and each company appears in several.
 */
export class TierviewLines {
  private readonly out: CsvBytes;
  private readonly rootFields: Buffer;
  private readonly companies = new Map<TierCompany, Buffer>();
  private readonly lists = new Map<readonly string[], Buffer>();

  /** `forSpreadsheet`: text fields as csvField gives them for a spreadsheet. */
  constructor(root: TierCompany, forSpreadsheet = false) {
    this.out = new CsvBytes(forSpreadsheet);
    this.rootFields = this.out.encoded(deliveryName(root), root.vid);
  }

  /** The records of `rels`, in their order. */
  rows(rels: readonly TierRelationship[]): Buffer {
    const o = this.out;
    for (const rel of rels) {
      o.bytes(this.rootFields);
      o.comma();
      o.bytes(this.company(rel.customer));
      o.comma();
      o.bytes(this.company(rel.supplier));
      o.comma();
      o.field(rel.edge_id);
      o.comma();
      o.field(rel.cluster_edge_id);
      o.comma();
      o.field(rel.confidence_score);
      o.comma();
      this.list(rel.hs_codes);
      o.comma();
      o.field(rel.status_code);
      o.comma();
      this.list(rel.evidence_types);
      o.comma();
      o.field(rel.latest_evidence_date);
      o.end();
    }
    return o.take();
  }

  private company(c: TierCompany): Buffer {
    let fields = this.companies.get(c);
    if (fields === undefined) {
      fields = this.out.encoded(c.tier, deliveryName(c), c.vid, c.cid_id);
      this.companies.set(c, fields);
    }
    return fields;
  }

  private list(xs: readonly string[]): void {
    if (xs.length === 0) return;
    // A list the store made for this row alone would only grow the map.
    if (!Object.isFrozen(xs)) return this.out.field(listField(xs));
    let field = this.lists.get(xs);
    if (field === undefined) {
      field = this.out.encoded(listField(xs));
      this.lists.set(xs, field);
    }
    this.out.bytes(field);
  }
}

/**
 * The single-table export's only row when the walk found no relationship: it
 * names the root, every relationship column left empty, so the file still
 * says whose network it is.
 */
export function rootOnlyRecord(root: TierCompany): CsvRecord {
  const out: CsvRecord = {};
  for (const c of TIERVIEW_COLUMNS) out[c] = null;
  out.root_node_name = deliveryName(root);
  out.root_node_vid = root.vid;
  return out;
}

export function companyRecord(c: TierCompany): CsvRecord {
  return {
    vid: c.vid,
    tier: c.tier,
    name: c.name,
    company_legal_name: c.company_legal_name,
    delivery_name: deliveryName(c),
    cid_id: c.cid_id,
    domiciled_country: c.domiciled_country,
    websites: listField(c.websites),
    is_public: c.is_public === null ? null : String(c.is_public),
    count_suppliers: c.count_suppliers,
    count_customers: c.count_customers,
    industry: c.industry,
    industry_code_system: c.industry_code_system,
    industry_code: c.industry_code,
  };
}

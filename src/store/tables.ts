/**
 * The staging contract between the importer and the store adapters.
 *
 * The importer validates the user's CSV files, derives counts and cluster edges,
 * and writes one staging file per table below, columns in exactly this order
 * (node tables: their columns; relationship tables: `from`, `to`, then their
 * properties), with a header row. Adapters bulk-load these files.
 *
 * Staging files are tab-separated text with no quoting at all: no staged value
 * holds a tab, a line break or any other control character (the importer
 * refuses them, turns tabs and line breaks in free text into spaces, and JSON
 * escapes them), so a field ends at the next tab and a row at the next line
 * feed, and files can be read in parallel. Quoting would cost the engine's
 * reader more than the bytes it adds: most of the text is JSON, full of quotes.
 * Encodings:
 * - STRING: the text itself; empty field = null.
 * - STRING[]: the list literal `[a,b]` (see encodeList); `[]` for none. Elements
 *   are never empty, never start or end with white space and hold none of
 *   `, [ ] { } ' " \` nor control characters: the importer refuses such values,
 *   or percent-encodes them in URLs.
 * - TEXT[]: a list of any single-line text (aliases): the list literal `[a,b]`
 *   with `%` and `, [ ] { } ' " \` of each element percent-encoded (`%2C`), so
 *   that splitting at commas stays exact (see encodeTextList, decodeTextElement).
 *   Elements are never empty and never start or end with white space.
 * - JSON: a JSON document (see encodeJson and the shapes below).
 * - TIMESTAMP: ISO 8601 UTC, e.g. 2021-03-04T00:00:00Z; empty field = null.
 * - BOOLEAN: true / false; empty field = null.
 * - INT64 / DOUBLE: decimal text; empty field = null.
 *
 * Identifiers, addresses and evidence are read only together with their
 * company or edge, so they travel as JSON on that row: one primary-key lookup
 * answers a profile or an edge, and the bulk load has no tables of their own.
 *   Company.identifiers: [{"type","value"}], sorted by type, then value.
 *   Company.addresses:   [{"address_line","city","region","postal_code","country","type"}], input order, blanks null.
 *   Edge.evidences:      [[id, date, type, url, domain, status_id, provided_by_customer, metadata,
 *                          finalised_on, created_on, last_modified_on]] (EVIDENCE_FIELDS): one array
 *                          per item, newest date first, then id; dates ISO UTC, as YYYY-MM-DD when
 *                          the time is midnight, or null; status_id a number or null. Positional,
 *                          because evidence is most of an import's bytes: field names in every
 *                          item would double the Edge table and the time to load it. Readers also
 *                          accept items as objects with these field names.
 */
export type ColumnType =
  'STRING' | 'STRING[]' | 'TEXT[]' | 'JSON' | 'TIMESTAMP' | 'BOOLEAN' | 'INT64' | 'DOUBLE';

export interface TableSpec {
  /** Table (node label or relationship type) name. */
  readonly name: string;
  readonly kind: 'node' | 'rel';
  /** For relationship tables: the node tables at either end (columns `from`, `to` hold their keys). */
  readonly from?: string;
  readonly to?: string;
  /** Properties in staging-file order (for rels, after `from` and `to`). */
  readonly columns: readonly (readonly [string, ColumnType])[];
}

const ts = 'TIMESTAMP' as const;

export const TABLES = {
  Company: {
    name: 'Company',
    kind: 'node',
    columns: [
      ['vid', 'STRING'],
      ['cid_id', 'STRING'],
      ['name', 'STRING'],
      ['company_legal_name', 'STRING'],
      ['description', 'STRING'],
      ['domains', 'STRING[]'],
      ['websites', 'STRING[]'],
      ['domiciled_country', 'STRING'],
      ['incorporated_country', 'STRING'],
      ['incorporation_date', ts],
      ['ipo_date', ts],
      ['is_active', 'BOOLEAN'],
      ['is_public', 'BOOLEAN'],
      ['is_freight_forwarder', 'BOOLEAN'],
      ['hq_phone_number', 'STRING'],
      ['is_cluster_parent', 'BOOLEAN'],
      // vid of the cluster's parent (the company itself for a cluster of one), so that
      // cluster lists reach the parent through the primary key instead of a scan.
      ['cluster_parent_vid', 'STRING'],
      ['cluster_size', 'INT64'],
      ['count_suppliers', 'INT64'],
      ['count_customers', 'INT64'],
      ['count_supplier_evidence', 'INT64'],
      ['count_customer_evidence', 'INT64'],
      ['identifiers', 'JSON'],
      ['addresses', 'JSON'],
      // Last, so that the embedded schema can add them to a graph imported before they existed.
      ['aliases', 'TEXT[]'],
      ['industry', 'STRING'],
      ['industry_code_system', 'STRING'],
      ['industry_code', 'STRING'],
    ],
  },
  Edge: {
    name: 'Edge',
    kind: 'node',
    columns: [
      ['edge_id', 'STRING'],
      ['supplier_id', 'STRING'],
      ['customer_id', 'STRING'],
      ['label', 'STRING'],
      ['status_code', 'INT64'],
      ['latest_edge_date', ts],
      ['latest_finalized_edge_date', ts],
      ['last_modified_on', ts],
      ['confidence_score', 'DOUBLE'],
      ['hs_codes', 'STRING[]'],
      ['evidences', 'JSON'],
    ],
  },
  SUPPLIES: {
    name: 'SUPPLIES',
    kind: 'rel',
    from: 'Company',
    to: 'Company',
    columns: [
      // What relationship lists and tier walks read. An edge's label and its other
      // dates live on its Edge node only, and its cluster edge id is the two
      // companies' cid_id (see toTierRelationship): the engine stores relationship
      // properties in both directions, and every string column costs seconds per
      // million rows to load.
      ['edge_id', 'STRING'],
      ['confidence_score', 'DOUBLE'],
      ['latest_edge_date', ts],
      ['status_code', 'INT64'],
      ['evidence_types', 'STRING[]'],
      ['hs_codes', 'STRING[]'],
    ],
  },
  CLUSTER_SUPPLIES: {
    name: 'CLUSTER_SUPPLIES',
    kind: 'rel',
    from: 'Company',
    to: 'Company',
    columns: [
      ['relationship_id', 'STRING'],
      ['edge_ids', 'STRING[]'],
      ['confidence_score', 'DOUBLE'],
      ['latest_edge_date', ts],
      ['evidence_types', 'STRING[]'],
    ],
  },
} as const satisfies Record<string, TableSpec>;

export type TableName = keyof typeof TABLES;

/** The fields of an evidence item in Edge.evidences, in their order. */
export const EVIDENCE_FIELDS = [
  'id',
  'date',
  'type',
  'url',
  'domain',
  'status_id',
  'provided_by_customer',
  'metadata',
  'finalised_on',
  'created_on',
  'last_modified_on',
] as const;

/** Load order: node tables before the relationship tables that point at them. */
export const LOAD_ORDER: readonly TableName[] = ['Company', 'Edge', 'SUPPLIES', 'CLUSTER_SUPPLIES'];

/** Characters a list element may not hold (the engine's list literal syntax uses them). */
export const LIST_ELEMENT_FORBIDDEN = /[,[\]{}'"\\]/;

/** Whether `value` can be an element of a staged list: no syntax characters, no control characters, no edge spaces. */
export function isListElement(value: string): boolean {
  if (value.length === 0 || value.trim() !== value || LIST_ELEMENT_FORBIDDEN.test(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

/** The staged text of a list: `[a,b]`. Throws on an element that cannot be staged. */
export function encodeList(items: readonly string[]): string {
  for (const item of items) {
    if (!isListElement(item)) throw new Error(`list element cannot be staged: ${JSON.stringify(item)}`);
  }
  return `[${items.join(',')}]`;
}

const TEXT_ESCAPE_RE = /[%,[\]{}'"\\]/g;
const TEXT_UNESCAPE_RE = /%([0-9A-F]{2})/g;

/** The staged text of a TEXT[] list: elements percent-encoded, so they may hold any character but control ones. */
export function encodeTextList(items: readonly string[]): string {
  const escaped = items.map((item) => {
    if (item.length === 0 || item.trim() !== item || UNSTAGEABLE_RE.test(item))
      throw new Error(`list element cannot be staged: ${JSON.stringify(item)}`);
    return item.replace(TEXT_ESCAPE_RE, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  });
  return `[${escaped.join(',')}]`;
}

/** One element of a staged TEXT[] list as it was before encodeTextList. */
export function decodeTextElement(element: string): string {
  return element.indexOf('%') < 0
    ? element
    : element.replace(TEXT_UNESCAPE_RE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Separates the fields of a staging file. */
export const STAGING_DELIMITER = '\t';

/**
 * A character no staged value holds (staged values hold no control characters): the quote and escape
 * the embedded engine is given for staging files, so that it neither reads nor writes either.
 */
export const NEVER_STAGED = '\u0001';

/** Characters no staged value may hold: they would end its field or its row. */
// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const UNSTAGEABLE_RE = /[\x00-\x1f\x7f]/;

/**
 * A text value as a staging field. Validated values never hold a control
 * character; this refuses one rather than let it shift the columns of a row.
 */
export function stagedText(value: string): string {
  if (UNSTAGEABLE_RE.test(value)) throw new Error(`value cannot be staged: ${JSON.stringify(value)}`);
  return value;
}

/** JSON text for a staged JSON column (JSON escapes every control character). */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * Written into a staging directory once every staging file is complete, with
 * the row counts; adapters refuse a directory without it.
 */
export const SUCCESS_MARKER = '_SUCCESS';

/** Staging file name of a table inside a staging directory. */
export function stagingFile(table: TableName): string {
  return `${table}.tsv`;
}

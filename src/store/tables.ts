/**
 * The staging contract between the importer and the store adapters.
 *
 * The importer validates the user's CSV files, derives counts and cluster edges,
 * and writes one staging CSV per table below, columns in exactly this order
 * (node tables: their columns; relationship tables: `from`, `to`, then their
 * properties). Adapters bulk-load these files. Value encoding in staging files:
 * - STRING: RFC 4180 field; empty field = null.
 * - STRING[]: the elements joined by U+001F (unit separator); empty field = [].
 *   (The embedded engine keeps quote characters inside CSV list literals, so
 *   lists cannot travel as JSON or bracketed text; elements never hold U+001F.)
 * - TIMESTAMP: ISO 8601 UTC, e.g. 2021-03-04T00:00:00Z; empty field = null.
 * - BOOLEAN: true / false; empty field = null.
 * - INT64 / DOUBLE: decimal text; empty field = null.
 */
export type ColumnType = 'STRING' | 'STRING[]' | 'TIMESTAMP' | 'BOOLEAN' | 'INT64' | 'DOUBLE';

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
      ['cluster_edge_id', 'STRING'],
    ],
  },
  Evidence: {
    name: 'Evidence',
    kind: 'node',
    columns: [
      ['id', 'STRING'],
      ['edge_id', 'STRING'],
      ['date', ts],
      ['type', 'STRING'],
      ['url', 'STRING'],
      ['domain', 'STRING'],
      ['status_id', 'INT64'],
      ['provided_by_customer', 'BOOLEAN'],
      ['metadata', 'STRING'],
      ['finalised_on', ts],
      ['created_on', ts],
      ['last_modified_on', ts],
    ],
  },
  Identifier: {
    name: 'Identifier',
    kind: 'node',
    columns: [
      ['key', 'STRING'],
      ['type', 'STRING'],
      ['value', 'STRING'],
    ],
  },
  Address: {
    name: 'Address',
    kind: 'node',
    columns: [
      ['id', 'STRING'],
      ['address_line', 'STRING'],
      ['city', 'STRING'],
      ['region', 'STRING'],
      ['postal_code', 'STRING'],
      ['country', 'STRING'],
      ['type', 'STRING'],
    ],
  },
  SUPPLIES: {
    name: 'SUPPLIES',
    kind: 'rel',
    from: 'Company',
    to: 'Company',
    columns: [
      ['edge_id', 'STRING'],
      ['confidence_score', 'DOUBLE'],
      ['latest_edge_date', ts],
      ['latest_finalized_edge_date', ts],
      ['last_modified_on', ts],
      ['status_code', 'INT64'],
      ['label', 'STRING'],
      ['evidence_types', 'STRING[]'],
      ['hs_codes', 'STRING[]'],
      ['cluster_edge_id', 'STRING'],
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
  HAS_EVIDENCE: { name: 'HAS_EVIDENCE', kind: 'rel', from: 'Edge', to: 'Evidence', columns: [] },
  HAS_IDENTIFIER: { name: 'HAS_IDENTIFIER', kind: 'rel', from: 'Company', to: 'Identifier', columns: [] },
  HAS_ADDRESS: { name: 'HAS_ADDRESS', kind: 'rel', from: 'Company', to: 'Address', columns: [] },
} as const satisfies Record<string, TableSpec>;

export type TableName = keyof typeof TABLES;

/** Load order: node tables before the relationship tables that point at them. */
export const LOAD_ORDER: readonly TableName[] = [
  'Company',
  'Edge',
  'Evidence',
  'Identifier',
  'Address',
  'SUPPLIES',
  'CLUSTER_SUPPLIES',
  'HAS_EVIDENCE',
  'HAS_IDENTIFIER',
  'HAS_ADDRESS',
];

/** Staging file name of a table inside a staging directory. */
export const LIST_SEPARATOR = '\u001f';

export function stagingFile(table: TableName): string {
  return `${table}.csv`;
}

/**
 * Plain shapes of the data the service serves. Field names are the wire names
 * of the REST and GraphQL interfaces (snake_case), so a response body is these
 * objects as they are. Date-times are ISO 8601 UTC strings.
 */

export interface Identifier {
  type: string;
  value: string;
}

export interface Address {
  address_line: string | null;
  city: string | null;
  region: string | null;
  postal_code: string | null;
  country: string | null;
  type: string | null;
}

/** Fields shared by search results and profiles. */
export interface CompanyCore {
  vid: string;
  cid_id: string;
  name: string;
  company_legal_name: string | null;
  description: string | null;
  domains: string[];
  websites: string[];
  count_supplier_evidence: number;
  count_customer_evidence: number;
  count_customers: number;
  count_suppliers: number;
}

export interface CompanyProfile extends CompanyCore {
  identifiers: Identifier[];
  addresses: Address[];
  domiciled_country: string | null;
  incorporated_country: string | null;
  incorporation_date: string | null;
  ipo_date: string | null;
  is_active: boolean | null;
  is_freight_forwarder: boolean | null;
  is_public: boolean | null;
  hq_phone_number: string | null;
  is_cluster_parent: boolean;
  /** Former names, trading names, tickers and abbreviations, in import order. */
  aliases: string[];
  /** Free-text industry, and its code in a classification (NAICS, ISIC, NACE, SIC, ...). */
  industry: string | null;
  industry_code_system: string | null;
  industry_code: string | null;
}

/** The counterpart company inside a relationship list item (spec 2.2). */
export interface CompanySummary {
  vid: string;
  name: string;
  company_legal_name: string | null;
  description: string | null;
  domains: string[];
  country: string | null;
  count_supplier_evidence: number;
  count_customer_evidence: number;
  count_customers: number;
  count_suppliers: number;
}

export interface RelationshipSummary {
  confidence_score: number;
  latest_relationship_date: string | null;
  relationship_type: string;
  relationship_id: string;
  edge_ids: string[];
}

export interface RelationshipItem {
  counterpart: CompanySummary;
  relationship: RelationshipSummary;
  evidences: { evidence_types: string[] };
}

export interface Evidence {
  id: string;
  date: string | null;
  type: string | null;
  url: string | null;
  domain: string | null;
  status_id: number | null;
  provided_by_customer: boolean | null;
  metadata: string | null;
  finalised_on: string | null;
  created_on: string | null;
  last_modified_on: string | null;
}

export interface EdgeRecord {
  edge_id: string;
  supplier_id: string;
  customer_id: string;
  label: string;
  status_code: number | null;
  latest_edge_date: string | null;
  latest_finalized_edge_date: string | null;
  last_modified_on: string | null;
  confidence_score: number;
  hs_codes: string[];
  evidences: Evidence[];
}

/** Which side of a company a relationship list looks at. */
export type Direction = 'suppliers' | 'customers';

/**
 * Rows of a tier walk: the store reports them (GraphStore.walkTiers) and the
 * tier-view export turns them into CSV records (tierview.ts), so they belong to
 * neither.
 */

/** A company reached by a walk, with the fields every export row needs. */
export interface TierCompany {
  vid: string;
  tier: number;
  name: string;
  company_legal_name: string | null;
  cid_id: string;
  domiciled_country: string | null;
  websites: string[];
  is_public: boolean | null;
  industry: string | null;
  industry_code_system: string | null;
  industry_code: string | null;
  count_suppliers: number;
  count_customers: number;
}

/** One relationship between a company of tier k and one of tier k + 1, with both companies. */
export interface TierRelationship {
  supplier: TierCompany;
  customer: TierCompany;
  edge_id: string;
  confidence_score: number | null;
  status_code: number | null;
  hs_codes: readonly string[];
  evidence_types: readonly string[];
  latest_evidence_date: string | null;
  cluster_edge_id: string | null;
}

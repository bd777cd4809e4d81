// One tier step towards customers: every relationship out of a company of $vids
// whose latest evidence is on or after $evidence_from (every one, undated too, when
// $any_date), with the customer's export
// fields (the Neo4j walk builds its tiers from them). The embedded engine answers
// `IN` by scanning every company, so its adapter uses step-customers-of for a short
// frontier. The optional filters of a request
// narrow the step itself: $min_confidence (a missing confidence counts as 0; -1
// lets all through) and $countries of the company reached, unless $all_countries.
// $vids: STRING[]
// $evidence_from: TIMESTAMP
// $any_date: BOOLEAN
// $min_confidence: DOUBLE
// $all_countries: BOOLEAN
// $countries: STRING[]
MATCH (c:Company)-[r:SUPPLIES]->(s:Company)
WHERE c.vid IN $vids AND ($any_date OR r.latest_edge_date >= $evidence_from)
  AND coalesce(r.confidence_score, 0.0) >= $min_confidence
  AND ($all_countries OR s.domiciled_country IN $countries)
RETURN c.vid AS from_vid,
       s.vid AS to_vid, s.name AS to_name, s.company_legal_name AS to_company_legal_name, s.cid_id AS to_cid_id,
       s.domiciled_country AS to_domiciled_country, s.websites AS to_websites, s.is_public AS to_is_public,
       s.industry AS to_industry, s.industry_code_system AS to_industry_code_system, s.industry_code AS to_industry_code,
       s.count_suppliers AS to_count_suppliers, s.count_customers AS to_count_customers,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score, r.status_code AS status_code,
       r.hs_codes AS hs_codes, r.evidence_types AS evidence_types,
       r.latest_edge_date AS latest_evidence_date

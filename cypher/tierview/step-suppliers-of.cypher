// tierview/step-suppliers for one company, $vid, with the same filters and columns.
// The embedded engine answers `c.vid IN $vids` by scanning every company (about
// 30 ms at 1M companies, more with the list's length) and a key match through its
// primary-key index in about 1 ms, so its adapter asks this once per company of
// a short frontier.
// $vid: STRING
// $evidence_from: TIMESTAMP
// $any_date: BOOLEAN
// $min_confidence: DOUBLE
// $all_countries: BOOLEAN
// $countries: STRING[]
MATCH (s:Company)-[r:SUPPLIES]->(c:Company {vid: $vid})
WHERE ($any_date OR r.latest_edge_date >= $evidence_from)
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

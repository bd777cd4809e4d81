// The profiles of the companies whose internal offset is in [$lo, $hi), with the
// columns of company/get-profile (embedded engine only): read range by range, once
// per graph generation, into the point-read file (point-file.ts). Ranges keep each
// query's result, which the engine holds whole, to a few hundred thousand rows.
// Only when the engine cannot write company/export-profiles to a file (one scan).
// $lo: INT64
// $hi: INT64
MATCH (c:Company)
WHERE offset(id(c)) >= $lo AND offset(id(c)) < $hi
RETURN c.vid AS vid, c.cid_id AS cid_id, c.name AS name, c.company_legal_name AS company_legal_name,
       c.description AS description, c.domains AS domains, c.websites AS websites,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers,
       c.domiciled_country AS domiciled_country, c.incorporated_country AS incorporated_country,
       c.incorporation_date AS incorporation_date, c.ipo_date AS ipo_date, c.is_active AS is_active,
       c.is_freight_forwarder AS is_freight_forwarder, c.is_public AS is_public,
       c.hq_phone_number AS hq_phone_number, c.is_cluster_parent AS is_cluster_parent,
       c.identifiers AS identifiers, c.addresses AS addresses, c.aliases AS aliases, c.industry AS industry,
       c.industry_code_system AS industry_code_system, c.industry_code AS industry_code

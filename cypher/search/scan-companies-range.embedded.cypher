// search/scan-companies for the companies whose internal offset is in [$lo, $hi)
// (embedded engine only): the engine holds a query's whole result in its buffer
// pool, and every company's search fields at a million companies do not fit the
// serving pool, so a server rebuilding its search index reads them range by range
// when the engine cannot write them to a file (search/export-companies, one scan).
// $lo: INT64
// $hi: INT64
MATCH (c:Company)
WHERE offset(id(c)) >= $lo AND offset(id(c)) < $hi
RETURN c.vid AS vid,
       c.name AS name,
       c.is_cluster_parent AS is_cluster_parent,
       c.cluster_size AS cluster_size,
       c.domiciled_country AS domiciled_country,
       c.domains AS domains,
       c.websites AS websites,
       c.identifiers AS identifiers,
       c.addresses AS addresses,
       c.cid_id AS cid_id,
       c.company_legal_name AS company_legal_name,
       c.description AS description,
       c.count_supplier_evidence AS count_supplier_evidence,
       c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers,
       c.count_suppliers AS count_suppliers,
       c.aliases AS aliases,
       c.industry AS industry,
       c.industry_code AS industry_code,
       c.industry_code_system AS industry_code_system

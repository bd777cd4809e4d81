// search/export-companies (embedded engine only): every company with the columns of
// search/scan-companies, for `COPY (<this query>) TO <file>`. The engine holds a query's
// whole result in its buffer pool, so a server reading these rows for its search index read
// them range by range, and every range scanned every company's columns again (a range is a
// filter, not a seek): 10 ranges, some 24 s at a million companies. Written to a file, the
// result streams out in one scan (about 2 s there), in the text of the import's staging files:
// each value as it was staged, the boolean as true or false (the engine writes True and False).
MATCH (c:Company)
RETURN c.vid AS vid,
       c.name AS name,
       lower(cast(c.is_cluster_parent AS STRING)) AS is_cluster_parent,
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

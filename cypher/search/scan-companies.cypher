// Every company, with what the in-process search index keeps of it: its search keys and
// the fields of a search result. What is derived from them (searched by default, parent of a
// cluster of several, relationships) is derived by toSearchRow, for staged rows too.
MATCH (c:Company)
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

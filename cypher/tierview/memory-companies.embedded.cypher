// Every company's internal offset and what an export shows of it, names and details,
// and the domicile a country filter reads (embedded engine only): read once per graph
// generation into the tier walks' memory (walk-memory.ts).
MATCH (c:Company)
RETURN offset(id(c)) AS off, c.name AS name, c.company_legal_name AS company_legal_name, c.cid_id AS cid_id,
       c.domiciled_country AS domiciled_country, c.websites AS websites, c.is_public AS is_public,
       c.industry AS industry, c.industry_code_system AS industry_code_system, c.industry_code AS industry_code,
       c.count_suppliers AS count_suppliers, c.count_customers AS count_customers,
       c.cluster_parent_vid AS cluster_parent_vid, c.is_cluster_parent AS is_cluster_parent

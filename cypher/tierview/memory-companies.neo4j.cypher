// Every company's vid and what an export shows of it, names and details, and the
// domicile a country filter reads, and its cluster (cluster lists and members) (Neo4j): read once per graph generation into the
// tier walks' memory (walk-memory.ts), where a company's offset is its place in
// this read. Neo4j has no dense internal offsets to key them by.
MATCH (c:Company)
RETURN c.vid AS vid, c.name AS name, c.company_legal_name AS company_legal_name, c.cid_id AS cid_id,
       c.domiciled_country AS domiciled_country, c.websites AS websites, c.is_public AS is_public,
       c.industry AS industry, c.industry_code_system AS industry_code_system, c.industry_code AS industry_code,
       c.count_suppliers AS count_suppliers, c.count_customers AS count_customers,
       c.cluster_parent_vid AS cluster_parent_vid, c.is_cluster_parent AS is_cluster_parent

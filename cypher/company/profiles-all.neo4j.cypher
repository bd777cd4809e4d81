// Every company's profile, with the columns of company/get-profile (Neo4j): read in
// one streamed query, once per graph generation, into the point-read file
// (point-file.ts). Neo4j has no dense internal offsets to read ranges by, and the
// driver pulls rows only as the file takes them. Dates travel as epoch milliseconds
// (decoding a DATETIME in the driver costs more than the rest of a row) and become
// dates again before they are written.
MATCH (c:Company)
RETURN c.vid AS vid, c.cid_id AS cid_id, c.name AS name, c.company_legal_name AS company_legal_name,
       c.description AS description, c.domains AS domains, c.websites AS websites,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers,
       c.domiciled_country AS domiciled_country, c.incorporated_country AS incorporated_country,
       c.incorporation_date.epochMillis AS incorporation_date, c.ipo_date.epochMillis AS ipo_date, c.is_active AS is_active,
       c.is_freight_forwarder AS is_freight_forwarder, c.is_public AS is_public,
       c.hq_phone_number AS hq_phone_number, c.is_cluster_parent AS is_cluster_parent,
       c.identifiers AS identifiers, c.addresses AS addresses, c.aliases AS aliases, c.industry AS industry,
       c.industry_code_system AS industry_code_system, c.industry_code AS industry_code

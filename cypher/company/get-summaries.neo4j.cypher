// The counterpart fields (spec 2.2) of the companies of one relationship page
// (Neo4j only): one round trip for the page instead of one per counterpart.
// $vids: STRING[]
UNWIND $vids AS wanted
MATCH (c:Company {vid: wanted})
RETURN c.vid AS vid, c.name AS name, c.company_legal_name AS company_legal_name, c.description AS description,
       c.domains AS domains, c.domiciled_country AS country,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers

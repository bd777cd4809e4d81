// The search-result fields of the companies of one search page (Neo4j only): one
// round trip for the page; the adapter restores the page's order.
// $vids: STRING[]
UNWIND $vids AS wanted
MATCH (c:Company {vid: wanted})
RETURN c.vid AS vid, c.cid_id AS cid_id, c.name AS name, c.company_legal_name AS company_legal_name,
       c.description AS description, c.domains AS domains, c.websites AS websites,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers

// The search-result fields of one company (search pages fetch their rows by
// primary key, concurrently: cheaper than one query over a list of vids).
// $vid: STRING
MATCH (c:Company {vid: $vid})
RETURN c.vid AS vid, c.cid_id AS cid_id, c.name AS name, c.company_legal_name AS company_legal_name,
       c.description AS description, c.domains AS domains, c.websites AS websites,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers

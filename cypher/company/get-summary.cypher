// The counterpart fields of a relationship list item (spec 2.2).
// $vid: STRING
MATCH (c:Company {vid: $vid})
RETURN c.vid AS vid, c.name AS name, c.company_legal_name AS company_legal_name, c.description AS description,
       c.domains AS domains, c.domiciled_country AS country,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers

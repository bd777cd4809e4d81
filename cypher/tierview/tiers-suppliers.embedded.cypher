// Every company within {{max_tier}} steps towards suppliers of $root, with its tier:
// the length of its shortest path over relationships whose latest evidence is on
// or after {{evidence_from}} (every one, undated too, when {{any_date}}). The engine's recursive join runs the breadth-first
// search natively; the filter inside it cannot take parameters, hence literals.
// $root: STRING
// {{max_tier}}: INT
// {{evidence_from}}: DATE
// {{any_date}}: BOOLEAN
MATCH (a:Company {vid: $root})<-[e:SUPPLIES* SHORTEST 1..{{max_tier}} (r, n | WHERE {{any_date}} OR r.latest_edge_date >= timestamp('{{evidence_from}}'))]-(b:Company)
RETURN offset(id(b)) AS company_offset, length(e) AS tier,
       b.vid AS vid, b.name AS name, b.company_legal_name AS company_legal_name, b.cid_id AS cid_id,
       b.domiciled_country AS domiciled_country, b.websites AS websites, b.is_public AS is_public,
       b.industry AS industry, b.industry_code_system AS industry_code_system, b.industry_code AS industry_code,
       b.count_suppliers AS count_suppliers, b.count_customers AS count_customers,
       b.count_suppliers AS onward_degree

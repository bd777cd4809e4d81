// tierview/tiers-customers with only what every row of an export names (vid, name,
// legal name, cid) and the onward degree: the walk of an export that shows no
// company details. The detail columns are a third of the query's cost: at 1M, for the
// 216k companies within 3 tiers of a hub of 15.7k suppliers, 0.9 s against 1.4 s.
// $root: STRING
// {{max_tier}}: INT
// {{evidence_from}}: DATE
// {{any_date}}: BOOLEAN
MATCH (a:Company {vid: $root})-[e:SUPPLIES* SHORTEST 1..{{max_tier}} (r, n | WHERE {{any_date}} OR r.latest_edge_date >= timestamp('{{evidence_from}}'))]->(b:Company)
RETURN offset(id(b)) AS company_offset, length(e) AS tier,
       b.vid AS vid, b.name AS name, b.company_legal_name AS company_legal_name, b.cid_id AS cid_id,
       b.count_customers AS onward_degree

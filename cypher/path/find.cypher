// Supplier chains from $source to $target: every path of SUPPLIES relationships
// (supplier -> customer) of at most {{max_hops}} hops, shortest first, at most
// $limit of them. Paths that pass a company twice are dropped by the caller; the
// order by weakest confidence within a length is the caller's too.
// $source: STRING
// $target: STRING
// $limit: INT64
// {{max_hops}}: INT
MATCH p = (s:Company {vid: $source})-[:SUPPLIES*1..{{max_hops}}]->(t:Company {vid: $target})
RETURN [n IN nodes(p)[1..-1] | n.vid] AS inner_vids,
       [r IN relationships(p) | r.edge_id] AS edge_ids,
       [r IN relationships(p) | r.confidence_score] AS confidences,
       [r IN relationships(p) | r.latest_edge_date] AS evidence_dates,
       length(p) AS hops
ORDER BY hops ASC
LIMIT $limit

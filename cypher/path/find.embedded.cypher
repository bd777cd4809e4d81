// Embedded variant of find.cypher: the engine has no list comprehensions, so the
// properties along the path come from properties(); nodes() of a recursive
// relationship already leaves out its two ends.
// $source: STRING
// $target: STRING
// $limit: INT64
// {{max_hops}}: INT
MATCH (s:Company {vid: $source})-[e:SUPPLIES*1..{{max_hops}}]->(t:Company {vid: $target})
RETURN properties(nodes(e), 'vid') AS inner_vids,
       properties(rels(e), 'edge_id') AS edge_ids,
       properties(rels(e), 'confidence_score') AS confidences,
       properties(rels(e), 'latest_edge_date') AS evidence_dates,
       length(e) AS hops
ORDER BY hops ASC
LIMIT $limit

// One edge with all its evidence items.
// $edge_id: STRING
MATCH (e:Edge {edge_id: $edge_id})
OPTIONAL MATCH (e)-[:HAS_EVIDENCE]->(ev:Evidence)
RETURN e AS edge, collect(ev) AS evidences

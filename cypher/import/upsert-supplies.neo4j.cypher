// Upserts one batch of supplier-to-customer relationships by edge_id (Neo4j import).
// Both companies are written before any relationship; a relationship whose edge
// moved to other companies is written anew here and its old copy pruned.
// $rows: MAP[]
// $import_id: STRING
UNWIND $rows AS row
MATCH (s:Company {vid: row.from})
MATCH (c:Company {vid: row.to})
MERGE (s)-[r:SUPPLIES {edge_id: row.props.edge_id}]->(c)
SET r = row.props, r.import_id = $import_id

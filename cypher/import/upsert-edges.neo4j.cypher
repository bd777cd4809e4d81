// Upserts one batch of staged edges (with their evidence as JSON) by edge_id (Neo4j import).
// $rows: MAP[]
// $import_id: STRING
UNWIND $rows AS row
MERGE (e:Edge {edge_id: row.edge_id})
SET e = row, e.import_id = $import_id

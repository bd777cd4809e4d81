// Upserts one batch of derived cluster-to-cluster relationships by relationship_id (Neo4j import).
// $rows: MAP[]
// $import_id: STRING
UNWIND $rows AS row
MATCH (s:Company {vid: row.from})
MATCH (c:Company {vid: row.to})
MERGE (s)-[r:CLUSTER_SUPPLIES {relationship_id: row.props.relationship_id}]->(c)
SET r = row.props, r.import_id = $import_id

// Upserts one batch of staged companies by vid (Neo4j import). `props` holds every
// staged column and replaces the node's properties, so a property the files no
// longer hold is removed; identifiers and addresses also become nodes, merged by
// their own keys. Everything written carries the import's id, so
// that what the import did not write can be pruned afterwards (prune.neo4j.cypher).
// $rows: MAP[]
// $import_id: STRING
UNWIND $rows AS row
MERGE (c:Company {vid: row.vid})
SET c = row.props, c.import_id = $import_id
FOREACH (i IN row.identifiers |
  MERGE (n:Identifier {type: i.type, value: i.value})
  SET n.import_id = $import_id
  MERGE (c)-[h:IDENTIFIED_BY]->(n)
  SET h.import_id = $import_id)
FOREACH (a IN row.addresses |
  MERGE (n:Address {address_id: a.address_id})
  SET n = a, n.import_id = $import_id
  MERGE (c)-[h:LOCATED_AT]->(n)
  SET h.import_id = $import_id)

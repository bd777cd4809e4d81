// After an import into Neo4j has upserted everything: removes what it did not
// write (relationships first, then nodes), in transactions of 10,000 rows so that
// no transaction holds millions of deletions. The import's id is a digest of the
// staged files, so importing the same files again removes nothing and leaves
// every property as it was. Each statement is auto-committed.
// $import_id: STRING
MATCH ()-[r:SUPPLIES]->() WHERE r.import_id IS NULL OR r.import_id <> $import_id
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH ()-[r:CLUSTER_SUPPLIES]->() WHERE r.import_id IS NULL OR r.import_id <> $import_id
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH ()-[r:IDENTIFIED_BY|LOCATED_AT]->() WHERE r.import_id IS NULL OR r.import_id <> $import_id
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Edge) WHERE n.import_id IS NULL OR n.import_id <> $import_id
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Identifier) WHERE n.import_id IS NULL OR n.import_id <> $import_id
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Address) WHERE n.import_id IS NULL OR n.import_id <> $import_id
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Company) WHERE n.import_id IS NULL OR n.import_id <> $import_id
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;

// Records the schema version that `tiergraph migrate` brought the database to (Neo4j only).
// $version: INT64
MERGE (m:TiergraphMeta {key: 'graph'})
ON CREATE SET m.generation = 0
SET m.schema_version = $version, m.migrated_at = datetime(),
    m.lineage = coalesce(m.lineage, randomUUID())

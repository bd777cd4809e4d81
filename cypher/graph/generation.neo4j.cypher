// The graph's generation and schema version (Neo4j only): every import and seed
// raises the generation, so each server instance knows to drop its caches and
// rebuild its search index when another process changed the data.
MATCH (m:TiergraphMeta {key: 'graph'})
RETURN m.generation AS generation, m.schema_version AS schema_version, m.lineage AS lineage

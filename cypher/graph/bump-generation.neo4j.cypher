// Raises the graph's generation after an import or a seed (Neo4j only).
MERGE (m:TiergraphMeta {key: 'graph'})
SET m.generation = coalesce(m.generation, 0) + 1, m.changed_at = datetime()
RETURN m.generation AS generation

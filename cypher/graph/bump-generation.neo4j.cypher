// Raises the graph's generation after an import or a seed (Neo4j only). The
// lineage is drawn once, when the record is made: a database emptied and filled
// again counts its generations anew, under another lineage.
MERGE (m:TiergraphMeta {key: 'graph'})
SET m.generation = coalesce(m.generation, 0) + 1, m.changed_at = datetime(),
    m.lineage = coalesce(m.lineage, randomUUID())
RETURN m.generation AS generation, m.lineage AS lineage

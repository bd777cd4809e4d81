// Customer clusters of a single-company cluster that are single companies too: the import
// stores no cluster relationship for such a pair (stage/derive.ts), whose relationship is the
// two companies' own, summed up here as the import sums up a stored one: the highest
// confidence (0 at least), the latest date, the edge ids and each edge's evidence types (the
// store sorts both, and joins the types). The first $limit, in the order of the stored list,
// which the store merges them with (engineClusterRows in store/point-reads.ts).
// $parent: STRING
// $min_confidence: DOUBLE
// $any_date: BOOLEAN
// $evidence_from: TIMESTAMP
// $limit: INT64
MATCH (p:Company {vid: $parent})-[r:SUPPLIES]->(other:Company)
WHERE p.cluster_size = 1 AND other.cluster_size = 1 AND other.vid <> p.vid
WITH other, p,
     coalesce(max(r.confidence_score), 0.0) AS confidence_score,
     max(r.latest_edge_date) AS latest_relationship_date,
     collect(r.edge_id) AS edge_ids,
     collect(r.evidence_types) AS evidence_lists
WHERE confidence_score >= $min_confidence
  AND ($any_date OR latest_relationship_date >= $evidence_from)
RETURN other.vid AS counterpart_vid,
       p.cid_id + '~' + other.cid_id AS relationship_id,
       confidence_score,
       latest_relationship_date,
       edge_ids,
       evidence_lists
ORDER BY confidence_score DESC, relationship_id ASC
LIMIT $limit

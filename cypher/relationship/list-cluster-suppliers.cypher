// Supplier clusters of a cluster: CLUSTER_SUPPLIES into its parent, most confident first.
// Cluster edges are derived at import. The counterpart is the other cluster's parent,
// fetched by vid afterwards (ordering whole nodes is slow); relationship_id breaks ties.
// $parent: STRING
// $min_confidence: DOUBLE
// $any_date: BOOLEAN
// $evidence_from: TIMESTAMP
// $skip: INT64
// $limit: INT64
MATCH (other:Company)-[r:CLUSTER_SUPPLIES]->(p:Company {vid: $parent})
WHERE r.confidence_score >= $min_confidence
  AND ($any_date OR r.latest_edge_date >= $evidence_from)
RETURN other.vid AS counterpart_vid,
       r.relationship_id AS relationship_id,
       r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_relationship_date,
       r.evidence_types AS evidence_types,
       r.edge_ids AS edge_ids
ORDER BY confidence_score DESC, relationship_id ASC
SKIP $skip
LIMIT $limit

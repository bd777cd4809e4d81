// Embedded variant of list-cluster-suppliers.cypher: returns the counterpart's internal offset,
// which the adapter maps to its vid in memory. Reading a property of every
// counterpart before ORDER BY/LIMIT costs ~90 ms on a hub of 15k suppliers; the
// offset is free (7-12 ms for the same page).
// $parent: STRING
// $min_confidence: DOUBLE
// $any_date: BOOLEAN
// $evidence_from: TIMESTAMP
// $skip: INT64
// $limit: INT64
MATCH (other:Company)-[r:CLUSTER_SUPPLIES]->(p:Company {vid: $parent})
WHERE r.confidence_score >= $min_confidence
  AND ($any_date OR r.latest_edge_date >= $evidence_from)
RETURN offset(id(other)) AS counterpart_offset,
       r.relationship_id AS relationship_id,
       r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_relationship_date,
       r.evidence_types AS evidence_types,
       r.edge_ids AS edge_ids
ORDER BY confidence_score DESC, relationship_id ASC
SKIP $skip
LIMIT $limit

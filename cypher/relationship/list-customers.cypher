// Customers of a company: its outgoing SUPPLIES relationships, most confident first;
// counterparts are fetched by vid afterwards (ordering whole nodes is slow);
// edge_id breaks ties so that pages never overlap.
// $vid: STRING
// $min_confidence: DOUBLE
// $any_date: BOOLEAN
// $evidence_from: TIMESTAMP
// $skip: INT64
// $limit: INT64
MATCH (c:Company {vid: $vid})-[r:SUPPLIES]->(other:Company)
WHERE r.confidence_score >= $min_confidence
  AND ($any_date OR r.latest_edge_date >= $evidence_from)
RETURN other.vid AS counterpart_vid,
       r.edge_id AS relationship_id,
       r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_relationship_date,
       r.evidence_types AS evidence_types,
       [r.edge_id] AS edge_ids
ORDER BY confidence_score DESC, relationship_id ASC
SKIP $skip
LIMIT $limit

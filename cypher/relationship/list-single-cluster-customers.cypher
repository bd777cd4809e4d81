// Customer relationships of a single-company cluster with other single-company clusters: the
// import stores no cluster relationship for such a pair (stage/derive.ts), whose relationship is
// the two companies' own. Every relationship of the pair comes back, unordered and unfiltered:
// the store sums them up per counterpart as the import sums up a stored one, then filters and
// orders the sums with the stored relationships (see cluster-lists.ts).
// $parent: STRING
MATCH (p:Company {vid: $parent})-[r:SUPPLIES]->(other:Company)
WHERE p.cluster_size = 1 AND other.cluster_size = 1 AND other.vid <> p.vid
RETURN other.vid AS counterpart_vid,
       other.cid_id AS counterpart_cid,
       p.cid_id AS own_cid,
       r.edge_id AS edge_id,
       r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_relationship_date,
       r.evidence_types AS evidence_types

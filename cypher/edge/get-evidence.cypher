// The evidence items of one edge.
// $edge_id: STRING
MATCH (e:Edge {edge_id: $edge_id})-[:HAS_EVIDENCE]->(v:Evidence)
RETURN v.id AS id, v.date AS date, v.type AS type, v.url AS url, v.domain AS domain, v.status_id AS status_id,
       v.provided_by_customer AS provided_by_customer, v.metadata AS metadata, v.finalised_on AS finalised_on,
       v.created_on AS created_on, v.last_modified_on AS last_modified_on

// Every edge with its evidence, with the columns of edge/get (Neo4j): read in one
// streamed query, once per graph generation, into the point-read file (point-file.ts).
// Dates travel as epoch milliseconds, as in company/profiles-all.
MATCH (e:Edge)
RETURN e.edge_id AS edge_id, e.supplier_id AS supplier_id, e.customer_id AS customer_id, e.label AS label,
       e.status_code AS status_code, e.latest_edge_date.epochMillis AS latest_edge_date,
       e.latest_finalized_edge_date.epochMillis AS latest_finalized_edge_date,
       e.last_modified_on.epochMillis AS last_modified_on,
       e.confidence_score AS confidence_score, e.hs_codes AS hs_codes, e.evidences AS evidences

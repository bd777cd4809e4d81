// The edges whose internal offset is in [$lo, $hi) with their evidence, with the
// columns of edge/get (embedded engine only): read range by range, once per graph
// generation, into the point-read file (point-file.ts), where the engine cannot write
// edge/export to a file (the way the edges are read otherwise).
// $lo: INT64
// $hi: INT64
MATCH (e:Edge)
WHERE offset(id(e)) >= $lo AND offset(id(e)) < $hi
RETURN e.edge_id AS edge_id, e.supplier_id AS supplier_id, e.customer_id AS customer_id, e.label AS label,
       e.status_code AS status_code, e.latest_edge_date AS latest_edge_date,
       e.latest_finalized_edge_date AS latest_finalized_edge_date, e.last_modified_on AS last_modified_on,
       e.confidence_score AS confidence_score, e.hs_codes AS hs_codes, e.evidences AS evidences

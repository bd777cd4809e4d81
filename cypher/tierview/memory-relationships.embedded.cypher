// The relationships into customers whose internal offset is in [$lo, $hi), with what
// an export row shows of them (embedded engine only): read range by range, once per
// graph generation, into the tier walks' memory (walk-memory.ts). Ranges keep each
// query's result, which the engine holds whole, to a few hundred thousand rows. The
// fallback of tierview/export-memory-relationships, for an engine that cannot write it to a file.
// $lo: INT64
// $hi: INT64
MATCH (s:Company)-[r:SUPPLIES]->(c:Company)
WHERE offset(id(c)) >= $lo AND offset(id(c)) < $hi
RETURN offset(id(s)) AS s, offset(id(c)) AS c,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score, r.status_code AS status_code,
       r.hs_codes AS hs_codes, r.evidence_types AS evidence_types, r.latest_edge_date AS latest

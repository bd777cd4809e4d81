// Every relationship, by the vids of its two companies, with what an export row
// shows of it (Neo4j): read in one streamed pass per graph generation into the
// tier walks' memory (walk-memory.ts). Neo4j streams a result as it is pulled,
// so the read needs no ranges. The date travels as epoch milliseconds: decoding
// a DATETIME in the driver cost more than the rest of the row.
MATCH (s:Company)-[r:SUPPLIES]->(c:Company)
RETURN s.vid AS s, c.vid AS c,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score, r.status_code AS status_code,
       r.hs_codes AS hs_codes, r.evidence_types AS evidence_types, r.latest_edge_date.epochMillis AS latest

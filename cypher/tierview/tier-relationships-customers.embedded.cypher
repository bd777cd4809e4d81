// Relationships out of the companies of tier {{tier}} (towards customers of $root),
// one partition ($part of $parts, by internal offset) at a time so that a large
// tier never has to fit in the engine's memory at once. Rows whose customer is
// not in tier {{tier}} + 1 (it is nearer the root, or in the same tier) are
// dropped by the adapter, which holds every company's tier from the tiers query.
// One pattern rather than the walk and then a second MATCH: the engine then hashes
// the tier's companies and streams the relationship table past them, where the two
// clauses made it hash the relationships (at 1M, tier 1 of a hub of 15.7k suppliers:
// 0.6 s against 0.8 s; tier 2: 1.2 s against 1.4 s).
// $root: STRING
// $parts: INT64
// $part: INT64
// {{tier}}: INT
// {{evidence_from}}: DATE
// {{any_date}}: BOOLEAN
MATCH (a:Company {vid: $root})-[e:SUPPLIES* SHORTEST 1..{{tier}} (x, n | WHERE {{any_date}} OR x.latest_edge_date >= timestamp('{{evidence_from}}'))]->(c:Company)-[r:SUPPLIES]->(s:Company)
WHERE length(e) = {{tier}} AND offset(id(c)) % $parts = $part
  AND ({{any_date}} OR r.latest_edge_date >= timestamp('{{evidence_from}}'))
RETURN offset(id(c)) AS from_offset, offset(id(s)) AS to_offset,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score, r.status_code AS status_code,
       r.hs_codes AS hs_codes, r.evidence_types AS evidence_types,
       r.latest_edge_date AS latest_evidence_date

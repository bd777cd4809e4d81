// path/step-suppliers for one company: every relationship into $vid, as that query
// returns them. The embedded engine answers `IN $vids` by scanning every company
// (about 30 ms at 1M) but a key match by its primary-key index (about 1 ms), so
// its adapter asks this once per company of a short frontier.
// $vid: STRING
MATCH (n:Company)-[r:SUPPLIES]->(c:Company {vid: $vid})
RETURN c.vid AS from_vid, n.vid AS to_vid,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_evidence_date,
       n.count_suppliers AS to_degree

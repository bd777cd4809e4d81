// One step of a path search towards suppliers: every relationship into a company
// of $vids, lean (the search needs the ends, the hop's fields and how many
// relationships the company reached has in the same direction, which is what
// expanding it next would read). See step-suppliers-of for one company.
// $vids: STRING[]
MATCH (n:Company)-[r:SUPPLIES]->(c:Company)
WHERE c.vid IN $vids
RETURN c.vid AS from_vid, n.vid AS to_vid,
       r.edge_id AS edge_id, r.confidence_score AS confidence_score,
       r.latest_edge_date AS latest_evidence_date,
       n.count_suppliers AS to_degree

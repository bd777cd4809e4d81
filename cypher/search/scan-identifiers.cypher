// (company, identifier value) pairs for the `identifier` search filter.
MATCH (c:Company)-[:HAS_IDENTIFIER]->(i:Identifier)
RETURN c.vid AS vid, i.value AS value

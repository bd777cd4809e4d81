// (company, city) pairs for the `city` search filter.
MATCH (c:Company)-[:HAS_ADDRESS]->(a:Address)
WHERE a.city IS NOT NULL
RETURN c.vid AS vid, a.city AS value

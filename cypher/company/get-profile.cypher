// A company with its identifiers and addresses (profile endpoint).
// $vid: STRING
MATCH (c:Company {vid: $vid})
OPTIONAL MATCH (c)-[:HAS_IDENTIFIER]->(i:Identifier)
WITH c, collect(i) AS identifiers
OPTIONAL MATCH (c)-[:HAS_ADDRESS]->(a:Address)
RETURN c AS company, identifiers, collect(a) AS addresses

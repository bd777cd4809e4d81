// Identifiers of a company.
// $vid: STRING
MATCH (c:Company {vid: $vid})-[:HAS_IDENTIFIER]->(i:Identifier)
RETURN i.type AS type, i.value AS value

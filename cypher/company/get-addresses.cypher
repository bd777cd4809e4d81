// Addresses of a company.
// $vid: STRING
MATCH (c:Company {vid: $vid})-[:HAS_ADDRESS]->(a:Address)
RETURN a.id AS id, a.address_line AS address_line, a.city AS city, a.region AS region,
       a.postal_code AS postal_code, a.country AS country, a.type AS type

// Number of company-to-company relationships.
MATCH ()-[r:SUPPLIES]->()
RETURN count(r) AS relationships

// Number of edges, the records behind relationships (Neo4j): what the point-read file
// must hold. Neo4j has no internal offsets to give a range by.
MATCH (e:Edge)
RETURN count(e) AS edges

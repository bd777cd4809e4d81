// Size of the graph, for readiness and start-up decisions.
MATCH (c:Company)
RETURN count(c) AS companies

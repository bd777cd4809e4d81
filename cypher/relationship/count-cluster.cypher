// Number of stored cluster relationships that are not between two single-company clusters
// (the import stores none of those, and reads sum them up from the companies' own): a walk
// memory that sums up another number from the relationships does not answer cluster reads.
MATCH (a:Company)-[r:CLUSTER_SUPPLIES]->(b:Company)
WHERE coalesce(a.cluster_size, 0) <> 1 OR coalesce(b.cluster_size, 0) <> 1
RETURN count(r) AS relationships

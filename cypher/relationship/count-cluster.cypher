// Number of cluster relationships: a walk memory that sums up another number from the
// relationships does not answer cluster reads.
MATCH ()-[r:CLUSTER_SUPPLIES]->()
RETURN count(r) AS relationships

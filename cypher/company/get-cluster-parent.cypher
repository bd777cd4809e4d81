// The parent of a company's cluster (the company itself for a cluster of one).
// $vid: STRING
MATCH (c:Company {vid: $vid})
RETURN c.cluster_parent_vid AS parent

// Members of a cluster by its parent's vid: the parent first, then by name; vid
// breaks ties so that pages never overlap. Read for a profile page, not in bulk.
// $parent: STRING
// $skip: INT64
// $limit: INT64
MATCH (c:Company)
WHERE c.cluster_parent_vid = $parent
RETURN c.vid AS vid, c.name AS name, c.domiciled_country AS country, c.is_cluster_parent AS is_cluster_parent
ORDER BY is_cluster_parent DESC, name, vid
SKIP $skip
LIMIT $limit

// Members of a cluster by its id (cid_id): the parent first, then by name; vid
// breaks ties so that pages never overlap. Read for one page of a cluster, not in bulk.
// $cid_id: STRING
// $skip: INT64
// $limit: INT64
MATCH (c:Company)
WHERE c.cid_id = $cid_id
RETURN c.vid AS vid, c.name AS name, c.domiciled_country AS country, c.is_cluster_parent AS is_cluster_parent
ORDER BY is_cluster_parent DESC, name, vid
SKIP $skip
LIMIT $limit

// Number of edges, the records behind relationships, and their highest internal
// offset (embedded engine only): the ranges the point-read file is read in.
MATCH (e:Edge)
RETURN count(e) AS edges, max(offset(id(e))) AS last

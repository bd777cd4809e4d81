// The internal offset of company $vid (embedded engine only): where a walk over the
// tier walks' memory (walk-memory.ts) starts.
// $vid: STRING
MATCH (c:Company {vid: $vid})
RETURN offset(id(c)) AS off

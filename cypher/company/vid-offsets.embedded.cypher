// Every company's internal offset and vid (embedded engine only): the adapter's
// in-memory map from the offsets that relationship lists return to vids.
MATCH (c:Company)
RETURN offset(id(c)) AS off, c.vid AS vid

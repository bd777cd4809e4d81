// Companies by vid (search result pages). Unknown vids yield no row; the
// caller restores the order of $vids.
// $vids: STRING[]
UNWIND $vids AS vid
MATCH (c:Company {vid: vid})
RETURN c AS company

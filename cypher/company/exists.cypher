// Whether a company exists (distinguishes "no relationships" from "unknown vid").
// $vid: STRING
MATCH (c:Company {vid: $vid})
RETURN c.vid AS vid

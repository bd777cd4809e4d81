// Every company's internal offset, the names an export row shows and the domicile a
// country filter reads (embedded engine only): read once per graph generation into
// the tier walks' memory (walk-memory.ts).
MATCH (c:Company)
RETURN offset(id(c)) AS off, c.name AS name, c.company_legal_name AS company_legal_name, c.cid_id AS cid_id,
       c.domiciled_country AS domiciled_country

// Every spelling of a domicile the companies hold: a walk limited to some
// countries matches the stored values that name them, whatever their spelling
// (codes or names), since the import keeps the value it was given.
MATCH (c:Company)
WHERE c.domiciled_country IS NOT NULL
RETURN DISTINCT c.domiciled_country AS country

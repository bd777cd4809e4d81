// company/export-profiles (embedded engine only): every company with the columns of
// company/profiles-range, for `COPY (<this query>) TO <file>`. A server writing its
// point-read file read the profiles range by range, and every range scanned every
// company's columns again (10 ranges, some 27 s at a million companies, before each row was
// mapped and written); written to a file, the result streams out in one scan, and the
// profiles are written from its lines as an import writes them from its staged lines
// (StagedProfileWriter). Values are in the staging's text: booleans as true or false and
// timestamps as ISO 8601 in UTC (the engine writes True, False and `1991-08-23 00:00:00`).
MATCH (c:Company)
RETURN c.vid AS vid, c.cid_id AS cid_id, c.name AS name, c.company_legal_name AS company_legal_name,
       c.description AS description, c.domains AS domains, c.websites AS websites,
       c.count_supplier_evidence AS count_supplier_evidence, c.count_customer_evidence AS count_customer_evidence,
       c.count_customers AS count_customers, c.count_suppliers AS count_suppliers,
       c.domiciled_country AS domiciled_country, c.incorporated_country AS incorporated_country,
       CASE WHEN c.incorporation_date IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(c.incorporation_date AS STRING), ' ', 'T'), 'Z') END AS incorporation_date,
       CASE WHEN c.ipo_date IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(c.ipo_date AS STRING), ' ', 'T'), 'Z') END AS ipo_date,
       lower(cast(c.is_active AS STRING)) AS is_active,
       lower(cast(c.is_freight_forwarder AS STRING)) AS is_freight_forwarder,
       lower(cast(c.is_public AS STRING)) AS is_public,
       c.hq_phone_number AS hq_phone_number, lower(cast(c.is_cluster_parent AS STRING)) AS is_cluster_parent,
       c.identifiers AS identifiers, c.addresses AS addresses, c.aliases AS aliases, c.industry AS industry,
       c.industry_code_system AS industry_code_system, c.industry_code AS industry_code

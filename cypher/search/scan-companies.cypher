// Every company, with what the in-process search index keeps of it.
MATCH (c:Company)
RETURN c.vid AS vid,
       c.name AS name,
       c.is_cluster_parent OR c.cluster_size = 1 AS searched_by_default,
       c.is_cluster_parent AND c.cluster_size > 1 AS is_cluster_parent,
       c.count_suppliers + c.count_customers AS degree,
       c.domiciled_country AS country,
       c.domains AS domains,
       c.websites AS websites,
       c.identifiers AS identifiers,
       c.addresses AS addresses

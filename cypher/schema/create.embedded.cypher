// Graph schema for the embedded engine (Kuzu dialect: tables with primary keys
// instead of constraints). Idempotent: every statement uses IF NOT EXISTS.
// The column order of each table is the column order of its staging CSV file
// (src/store/tables.ts); a test keeps the two in step. JSON columns hold the
// identifiers and addresses of a company and the evidence of an edge. List columns
// hold their list literal as text ([a,b]): the engine never computes on them, and
// text loads twice as fast as its list type.
// The engine indexes primary keys only, so a cluster's members (Company.cid_id) are
// found by a scan of the companies: about 70 ms a page at a million companies, where
// Neo4j uses its company_cid_id index.
CREATE NODE TABLE IF NOT EXISTS Company(vid STRING, cid_id STRING, name STRING, company_legal_name STRING, description STRING, domains STRING, websites STRING, domiciled_country STRING, incorporated_country STRING, incorporation_date TIMESTAMP, ipo_date TIMESTAMP, is_active BOOLEAN, is_public BOOLEAN, is_freight_forwarder BOOLEAN, hq_phone_number STRING, is_cluster_parent BOOLEAN, cluster_parent_vid STRING, cluster_size INT64, count_suppliers INT64, count_customers INT64, count_supplier_evidence INT64, count_customer_evidence INT64, identifiers STRING, addresses STRING, aliases STRING, industry STRING, industry_code_system STRING, industry_code STRING, PRIMARY KEY(vid));
// Columns added since the first release, for graphs imported before them (no-ops on a new graph).
ALTER TABLE Company ADD IF NOT EXISTS aliases STRING;
ALTER TABLE Company ADD IF NOT EXISTS industry STRING;
ALTER TABLE Company ADD IF NOT EXISTS industry_code_system STRING;
ALTER TABLE Company ADD IF NOT EXISTS industry_code STRING;
CREATE NODE TABLE IF NOT EXISTS Edge(edge_id STRING, supplier_id STRING, customer_id STRING, label STRING, status_code INT64, latest_edge_date TIMESTAMP, latest_finalized_edge_date TIMESTAMP, last_modified_on TIMESTAMP, confidence_score DOUBLE, hs_codes STRING, evidences STRING, PRIMARY KEY(edge_id));
CREATE REL TABLE IF NOT EXISTS SUPPLIES(FROM Company TO Company, edge_id STRING, confidence_score DOUBLE, latest_edge_date TIMESTAMP, status_code INT64, evidence_types STRING, hs_codes STRING);
CREATE REL TABLE IF NOT EXISTS CLUSTER_SUPPLIES(FROM Company TO Company, relationship_id STRING, edge_ids STRING, confidence_score DOUBLE, latest_edge_date TIMESTAMP, evidence_types STRING);

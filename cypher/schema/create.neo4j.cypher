// Graph schema for Neo4j 5: constraints and indexes, each IF NOT EXISTS, so the
// whole file can run at every start and by `tiergraph migrate` without effect on
// a database that already has them. Run statement by statement, auto-committed.
// Lookups by primary id: companies, edges (an edge's evidence lives on it), and the
// relationship ids that imports upsert by.
CREATE CONSTRAINT company_vid IF NOT EXISTS FOR (c:Company) REQUIRE c.vid IS UNIQUE;
CREATE CONSTRAINT edge_edge_id IF NOT EXISTS FOR (e:Edge) REQUIRE e.edge_id IS UNIQUE;
CREATE INDEX supplies_edge_id IF NOT EXISTS FOR ()-[r:SUPPLIES]-() ON (r.edge_id);
CREATE INDEX cluster_supplies_relationship_id IF NOT EXISTS FOR ()-[r:CLUSTER_SUPPLIES]-() ON (r.relationship_id);
// A cluster's members by its id (company/list-cluster-members): without it, one
// page of a cluster reads every company.
CREATE INDEX company_cid_id IF NOT EXISTS FOR (c:Company) ON (c.cid_id);
// Identifiers and addresses are also nodes on Neo4j, so that Cypher can find a
// company by an identifier's value or by an address's city and country.
CREATE CONSTRAINT identifier_type_value IF NOT EXISTS FOR (i:Identifier) REQUIRE (i.type, i.value) IS UNIQUE;
CREATE INDEX identifier_value IF NOT EXISTS FOR (i:Identifier) ON (i.value);
CREATE CONSTRAINT address_id IF NOT EXISTS FOR (a:Address) REQUIRE a.address_id IS UNIQUE;
CREATE INDEX address_city IF NOT EXISTS FOR (a:Address) ON (a.city);
CREATE INDEX address_country IF NOT EXISTS FOR (a:Address) ON (a.country);
// Bookkeeping: the schema version and the graph generation (see graph/*.neo4j.cypher).
CREATE CONSTRAINT tiergraph_meta_key IF NOT EXISTS FOR (m:TiergraphMeta) REQUIRE m.key IS UNIQUE;

import { parse } from 'graphql';
import type { DocumentNode } from 'graphql';

/**
 * The GraphQL operations behind the REST routes, parsed once at start-up. Their
 * selections list the REST fields in the order of the interface specification,
 * so a REST body is the GraphQL result as it is.
 */
const COMPANY_CORE = `
  vid cid_id name domains websites company_legal_name description
  count_supplier_evidence count_customer_evidence count_customers count_suppliers`;

const SUMMARY = `
  vid name company_legal_name description domains country
  count_supplier_evidence count_customer_evidence count_customers count_suppliers`;

const JOB = `
  run_id
  state { life_cycle_state result_state state_message user_cancelled_or_timedout }
  output { result truncated }`;

const LIST_ARGS = `$vid: ID!, $confidence_score: Float, $date: Date, $limit: Int, $offset: Int`;
const LIST_PASS = `vid: $vid, confidence_score: $confidence_score, date: $date, limit: $limit, offset: $offset`;

function listOperation(field: string, key: 'supplier' | 'customer'): DocumentNode {
  return parse(`query (${LIST_ARGS}) {
    list: ${field}(${LIST_PASS}) {
      has_more
      results {
        ${key} { ${SUMMARY} }
        relationship { confidence_score latest_relationship_date relationship_type relationship_id edge_ids }
        evidences { evidence_types }
      }
    }
  }`);
}

export const OPERATIONS = {
  searchCompanies: parse(`query (
    $name: String, $limit: Int, $offset: Int, $include_subsidiaries: Boolean, $min_similarity: Float,
    $city: String, $industry: String, $country: String, $website: String, $identifier: String, $sort: String
  ) {
    companies(
      name: $name, limit: $limit, offset: $offset, include_subsidiaries: $include_subsidiaries,
      min_similarity: $min_similarity, city: $city, industry: $industry, country: $country, website: $website, identifier: $identifier,
      sort: $sort
    ) {
      has_more
      results { search_similarity word_similarity matched_name ${COMPANY_CORE} }
    }
  }`),
  suggestCompanies: parse(`query ($q: String!, $limit: Int, $include_subsidiaries: Boolean) {
    suggestions: suggest_companies(q: $q, limit: $limit, include_subsidiaries: $include_subsidiaries) {
      vid name matched_name country
    }
  }`),
  paths: parse(`query ($from: ID!, $to: ID!, $max_tiers: Int, $direction: String, $limit: Int) {
    paths(from: $from, to: $to, max_tiers: $max_tiers, direction: $direction, limit: $limit) {
      length weakest_confidence
      companies { vid name }
      hops { relationship_id supplier_vid customer_vid confidence_score latest_evidence_date }
    }
  }`),
  companyProfile: parse(`query ($vid: ID!) {
    company(vid: $vid) {
      ${COMPANY_CORE}
      identifiers { type value }
      domiciled_country incorporated_country incorporation_date ipo_date
      is_active is_freight_forwarder is_public hq_phone_number
      addresses { address_line city region postal_code country type }
      is_cluster_parent
      aliases industry industry_code_system industry_code
    }
  }`),
  suppliers: listOperation('suppliers', 'supplier'),
  customers: listOperation('customers', 'customer'),
  clusterSuppliers: listOperation('cluster_suppliers', 'supplier'),
  clusterCustomers: listOperation('cluster_customers', 'customer'),
  edge: parse(`query ($edge_id: ID!) {
    edge(edge_id: $edge_id) {
      edge_id supplier_id customer_id label status_code
      latest_edge_date latest_finalized_edge_date last_modified_on confidence_score hs_codes
      evidences {
        id date type url domain status_id provided_by_customer metadata finalised_on created_on last_modified_on
      }
    }
  }`),
  startTierView: parse(`mutation ($input: TierViewInput!, $idempotency_key: String) {
    startTierView(input: $input, idempotency_key: $idempotency_key) { run_id replayed }
  }`),
  cluster: parse(`query ($cid_id: ID!, $limit: Int, $offset: Int) {
    cluster(cid_id: $cid_id, limit: $limit, offset: $offset) {
      cid_id
      parent { vid name country is_cluster_parent }
      members { has_more results { vid name country is_cluster_parent } }
    }
  }`),
  job: parse(`query ($run_id: ID!) { job(run_id: $run_id) { ${JOB} } }`),
  jobs: parse(`query ($limit: Int, $offset: Int) {
    jobs(limit: $limit, offset: $offset) { has_more results { ${JOB} } }
  }`),
  cancelJob: parse(`mutation ($run_id: ID!) { cancelJob(run_id: $run_id) { ${JOB} } }`),
} as const;

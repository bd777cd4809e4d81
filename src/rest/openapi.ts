import { ERROR_CODES } from '../domain/errors';

type Json = Record<string, unknown>;

const str = { type: 'string' };
const strN = { type: ['string', 'null'] };
const int = { type: 'integer' };
const num = { type: 'number' };
const dt = { type: ['string', 'null'], format: 'date-time' };
const strList = { type: 'array', items: str };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const companyCore: Json = {
  vid: { ...str, description: 'Unique company identifier.' },
  cid_id: { ...str, description: 'Cluster identifier; a company outside any cluster is a cluster of one.' },
  name: str,
  domains: strList,
  websites: strList,
  company_legal_name: strN,
  description: strN,
  count_supplier_evidence: { ...int, description: 'Evidence items of the relationships with its suppliers.' },
  count_customer_evidence: { ...int, description: 'Evidence items of the relationships with its customers.' },
  count_customers: int,
  count_suppliers: int,
};

const page = (item: string) => ({
  type: 'object',
  required: ['next', 'previous', 'results'],
  properties: {
    next: {
      ...strN,
      format: 'uri',
      description: 'Next page, every other parameter kept; null on the last page.',
    },
    previous: { ...strN, format: 'uri', description: 'Previous page; null on the first.' },
    results: { type: 'array', items: ref(item) },
  },
});

const q = (name: string, schema: Json, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
});
const limitParam = q(
  'limit',
  { ...int, minimum: 1, maximum: 100, default: 10 },
  'Page size; above the maximum answers 400 (MAX_PAGE_SIZE).',
);
const offsetParam = q(
  'offset',
  { ...int, minimum: 0, maximum: 10000, default: 0 },
  'Start position (MAX_OFFSET).',
);
const vidParam = { name: 'vid', in: 'path', required: true, schema: str, description: 'Company vid.' };

const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: Object.values(ERROR_CODES).find((c) => c.status === s)?.title ?? 'Error',
        content: { 'application/problem+json': { schema: ref('Problem') } },
      },
    ]),
  );

const ok = (schema: Json, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

const listOperation = (what: 'suppliers' | 'customers', cluster: boolean) => ({
  get: {
    operationId: `${cluster ? 'cluster' : 'company'}${what === 'suppliers' ? 'Suppliers' : 'Customers'}`,
    summary: cluster
      ? `${what === 'suppliers' ? 'Supplier' : 'Customer'} clusters of the company's cluster`
      : `${what === 'suppliers' ? 'Suppliers' : 'Customers'} of the company`,
    description: cluster
      ? "Relationships of every company sharing the cid_id of {vid}, grouped by counterpart cluster (relationship_type cluster_edge; edge_ids lists the company edges). The counterpart is the other cluster's parent."
      : 'Relationships of {vid} itself, most confident first (ties by relationship_id).',
    tags: ['relationships'],
    parameters: [
      vidParam,
      q(
        'confidence_score',
        { ...num, minimum: 0, maximum: 1, default: 0 },
        'Minimum confidence (inclusive).',
      ),
      q(
        'date',
        { ...str, format: 'date' },
        'Only relationships with evidence later than this date (YYYY-MM-DD): latest evidence on or after the next day, UTC.',
      ),
      limitParam,
      offsetParam,
    ],
    responses: {
      '200': ok(page(what === 'suppliers' ? 'SupplierItem' : 'CustomerItem')),
      ...problems(400, 401, 403, 404, 429),
    },
  },
});

/**
 * The OpenAPI 3.1 description of every /v1 route. Choices the interface
 * specification leaves open are stated here, where API users read them.
 */
export function openApiDocument(keyHeader: string): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'tiergraph',
      version: '1.1.4',
      description:
        'Supply-chain relationship data: company search, profiles, supplier and customer lists, edges with evidence. ' +
        `Every /v1 route needs an API key in the ${keyHeader} header (missing: 401, unknown or revoked: 403). ` +
        'Errors are RFC 9457 problem documents (application/problem+json). Requests are rate-limited per key ' +
        '(429 with Retry-After and the IETF RateLimit and RateLimit-Policy headers). Paths answer with and without a trailing slash. ' +
        'Unknown or repeated query parameters are refused with 400 naming them. A company outside any cluster is a cluster of one: its cid_id is its vid.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    tags: [{ name: 'companies' }, { name: 'relationships' }, { name: 'edges' }],
    paths: {
      '/v1/companies/': {
        get: {
          operationId: 'searchCompanies',
          summary: 'Search companies',
          description:
            'With `name`: companies whose name has PostgreSQL pg_trgm similarity >= min_similarity to it, by similarity then by number of relationships. ' +
            'Without: by number of relationships. All criteria given must match. By default only cluster parents and companies outside any cluster are searched.',
          tags: ['companies'],
          parameters: [
            q('name', str, 'Name or fragment; drives search_similarity.'),
            limitParam,
            offsetParam,
            q(
              'include_subsidiaries',
              { type: 'boolean', default: false },
              'Search every company, not only cluster parents and unclustered companies.',
            ),
            q(
              'min_similarity',
              { ...num, exclusiveMinimum: 0, maximum: 1, default: 0.3 },
              'Similarity threshold (pg_trgm default 0.3).',
            ),
            q('city', str, 'City of any address, case-insensitive.'),
            q('country', str, 'Long-form ISO 3166 name of the country of domicile, case-insensitive.'),
            q('website', str, 'Website or domain; scheme, www. and path are ignored.'),
            q('identifier', str, 'Any identifier value: LEI, PermID, Wikidata Q-id, ISIN, Wikipedia title.'),
          ],
          responses: { '200': ok(page('CompanySearchResult')), ...problems(400, 401, 403, 429) },
        },
      },
      '/v1/companies/{vid}/': {
        get: {
          operationId: 'companyProfile',
          summary: 'Company profile',
          tags: ['companies'],
          parameters: [vidParam],
          responses: { '200': ok(ref('CompanyProfile')), ...problems(400, 401, 403, 404, 429) },
        },
      },
      '/v1/companies/{vid}/suppliers/': listOperation('suppliers', false),
      '/v1/companies/{vid}/customers/': listOperation('customers', false),
      '/v1/companies/{vid}/cluster_suppliers/': listOperation('suppliers', true),
      '/v1/companies/{vid}/cluster_customers/': listOperation('customers', true),
      '/v1/edges/{edge_id}/': {
        get: {
          operationId: 'edge',
          summary: 'Edge with its evidence',
          tags: ['edges'],
          parameters: [
            {
              name: 'edge_id',
              in: 'path',
              required: true,
              schema: str,
              description: 'From edge_ids of a list item.',
            },
          ],
          responses: { '200': ok(ref('Edge')), ...problems(400, 401, 403, 404, 429) },
        },
      },
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: keyHeader } },
      schemas: {
        CompanySearchResult: {
          type: 'object',
          properties: {
            search_similarity: {
              ...num,
              description: 'pg_trgm similarity to name (float4); present only when name is given.',
            },
            ...companyCore,
          },
        },
        CompanyProfile: {
          type: 'object',
          properties: {
            ...companyCore,
            identifiers: { type: 'array', items: ref('Identifier') },
            domiciled_country: strN,
            incorporated_country: strN,
            incorporation_date: dt,
            ipo_date: dt,
            is_active: { type: ['boolean', 'null'] },
            is_freight_forwarder: { type: ['boolean', 'null'] },
            is_public: { type: ['boolean', 'null'] },
            hq_phone_number: strN,
            addresses: { type: 'array', items: ref('Address') },
          },
        },
        Identifier: {
          type: 'object',
          required: ['type', 'value'],
          properties: {
            type: { ...str, examples: ['LEI', 'PermID', 'Wikidata', 'Wikipedia', 'ISIN'] },
            value: str,
          },
        },
        Address: {
          type: 'object',
          properties: {
            address_line: strN,
            city: strN,
            region: strN,
            postal_code: strN,
            country: { ...strN, description: 'Long-form ISO 3166 name.' },
            type: { ...strN, examples: ['headquarters'] },
          },
        },
        CompanySummary: {
          type: 'object',
          properties: {
            vid: str,
            name: str,
            company_legal_name: strN,
            description: strN,
            domains: strList,
            country: { ...strN, description: 'Long-form country name of domicile.' },
            count_supplier_evidence: int,
            count_customer_evidence: int,
            count_customers: int,
            count_suppliers: int,
          },
        },
        Relationship: {
          type: 'object',
          properties: {
            confidence_score: num,
            latest_relationship_date: dt,
            relationship_type: { ...str, enum: ['edge', 'cluster_edge'] },
            relationship_id: str,
            edge_ids: strList,
          },
        },
        Evidences: { type: 'object', properties: { evidence_types: strList } },
        SupplierItem: {
          type: 'object',
          properties: {
            supplier: ref('CompanySummary'),
            relationship: ref('Relationship'),
            evidences: ref('Evidences'),
          },
        },
        CustomerItem: {
          type: 'object',
          properties: {
            customer: ref('CompanySummary'),
            relationship: ref('Relationship'),
            evidences: ref('Evidences'),
          },
        },
        Evidence: {
          type: 'object',
          properties: {
            id: str,
            date: dt,
            type: strN,
            url: { ...strN, format: 'uri' },
            domain: strN,
            status_id: { type: ['integer', 'null'] },
            provided_by_customer: { type: ['boolean', 'null'] },
            metadata: strN,
            finalised_on: dt,
            created_on: dt,
            last_modified_on: dt,
          },
        },
        Edge: {
          type: 'object',
          properties: {
            edge_id: str,
            supplier_id: str,
            customer_id: str,
            label: { ...str, examples: ['supply'] },
            status_code: { type: ['integer', 'null'] },
            latest_edge_date: dt,
            latest_finalized_edge_date: dt,
            last_modified_on: dt,
            confidence_score: num,
            evidences: { type: 'array', items: ref('Evidence') },
          },
        },
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail', 'code'],
          properties: {
            type: { ...str, format: 'uri-reference' },
            title: str,
            status: int,
            detail: str,
            instance: str,
            code: { ...str, enum: Object.keys(ERROR_CODES) },
            request_id: str,
            errors: {
              type: 'array',
              items: { type: 'object', properties: { field: str, reason: str } },
              description: 'Field-level problems: where (query.limit, path.vid, body.num_tiers) and why.',
            },
          },
        },
      },
    },
  };
}

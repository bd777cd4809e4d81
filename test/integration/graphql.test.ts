import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ GRAPHQL_MAX_DEPTH: '7', GRAPHQL_MAX_COST: '2000' });
});
afterAll(async () => {
  await t.stop();
});

interface GqlResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string; errors?: { field: string }[] } }[];
}

async function gql(
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ status: number; body: GqlResult }> {
  const res = await t.post('/graphql', { query, variables });
  return { status: res.status, body: (await res.json()) as GqlResult };
}

describe('GraphQL', () => {
  it('searches with the REST field names and nests relationships and evidence', async () => {
    const { status, body } = await gql(`{
      companies(name: "boeing", limit: 1) {
        has_more
        results {
          vid search_similarity count_suppliers
          identifiers { type value }
          suppliers(limit: 1) {
            has_more
            results {
              supplier { vid country company { vid domiciled_country } }
              relationship { confidence_score relationship_type edge_ids }
            }
          }
        }
      }
    }`);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      companies: {
        has_more: false,
        results: [
          {
            vid: 'boeing',
            search_similarity: 0.7,
            count_suppliers: 4,
            identifiers: [
              { type: 'LEI', value: 'RVDPPPGHCGZ40J4BQ305' },
              { type: 'Wikidata', value: 'Q66' },
            ],
            suppliers: {
              has_more: true,
              results: [
                {
                  supplier: {
                    vid: 'bolt',
                    country: 'Ireland',
                    company: { vid: 'bolt', domiciled_country: 'Ireland' },
                  },
                  relationship: { confidence_score: 0.9, relationship_type: 'edge', edge_ids: ['e1'] },
                },
              ],
            },
          },
        ],
      },
    });
  });

  it('looks up an edge with its evidence and its companies', async () => {
    const { body } = await gql(
      `query ($id: ID!) { edge(edge_id: $id) { edge_id hs_codes supplier { name } evidences { id type } } }`,
      {
        id: 'e1',
      },
    );
    expect(body.data).toEqual({
      edge: {
        edge_id: 'e1',
        hs_codes: ['7326'],
        supplier: { name: 'Bolt Castings Ltd' },
        evidences: [
          { id: 'ev2', type: 'text' },
          { id: 'ev1', type: 'text' },
        ],
      },
    });
  });

  it('serves cluster lists as root fields and company fields alike', async () => {
    const { body } = await gql(`{
      cluster_customers(vid: "acme-jp") { results { customer { vid } relationship { relationship_id } } }
      company(vid: "acme-hold") { cluster_customers { results { relationship { edge_ids } } } }
    }`);
    expect(body.data).toEqual({
      cluster_customers: {
        results: [{ customer: { vid: 'boeing' }, relationship: { relationship_id: 'K1~boeing' } }],
      },
      company: { cluster_customers: { results: [{ relationship: { edge_ids: ['e3', 'e4'] } }] } },
    });
  });

  it('reports NOT_FOUND and BAD_REQUEST with codes', async () => {
    const missing = await gql('{ company(vid: "nope") { vid } }');
    expect(missing.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const bad = await gql('{ companies(limit: 101) { results { vid } } }');
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    expect(bad.body.errors?.[0]?.extensions?.errors?.[0]?.field).toBe('limit');
    const badDate = await gql('{ suppliers(vid: "boeing", date: "2023-02-30") { has_more } }');
    expect(badDate.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('names the argument or input field of a refused date, written in the query or sent in a variable', async () => {
    const field = (r: { body: GqlResult }) => [
      r.body.errors?.[0]?.message,
      r.body.errors?.[0]?.extensions?.errors,
    ];
    const reason = 'must be a real date written YYYY-MM-DD';
    const input = '{ root_nodes: "boeing", num_tiers: 1, direction: supplier, min_evid_date: "2022-13-01" }';
    expect(field(await gql(`mutation { startTierView(input: ${input}) { run_id } }`))).toEqual([
      `min_evid_date: ${reason}`,
      [{ field: 'min_evid_date', reason }],
    ]);
    const byVariable = await gql('mutation($i: TierViewInput!) { startTierView(input: $i) { run_id } }', {
      i: { root_nodes: 'boeing', num_tiers: 1, direction: 'supplier', min_evid_date: '2022-13-01' },
    });
    expect(byVariable.body.errors?.[0]?.extensions?.errors).toEqual([{ field: 'min_evid_date', reason }]);
    // A value holding the words graphql-js uses for the path does not mislead it.
    const tricky = await gql('mutation($i: TierViewInput!) { startTierView(input: $i) { run_id } }', {
      i: { root_nodes: 'boeing', num_tiers: 1, direction: 'supplier', min_evid_date: 'x at "y"; z' },
    });
    expect(tricky.body.errors?.[0]?.extensions?.errors).toEqual([{ field: 'min_evid_date', reason }]);
    // A list's argument is called date.
    expect(field(await gql('{ suppliers(vid: "boeing", date: "2023-02-30") { has_more } }'))).toEqual([
      `date: ${reason}`,
      [{ field: 'date', reason }],
    ]);
  });

  it('refuses queries that nest too deep', async () => {
    const { status, body } = await gql(
      `{ company(vid: "boeing") { suppliers { results { supplier { company { customers { results { customer { vid } } } } } } } } }`,
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors?.[0]?.message).toMatch(/depth/);
  });

  it('refuses queries whose lists multiply past the cost limit', async () => {
    const { status, body } = await gql(
      `{ companies(limit: 100) { results { suppliers(limit: 100) { results { supplier { vid name } } } } } }`,
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toMatch(/cost/);
  });

  it('counts fragments in depth and cost', async () => {
    const { body } = await gql(`
      fragment S on RelationshipPage { results { supplier { company { customers { results { customer { vid } } } } } } }
      { company(vid: "boeing") { suppliers { ...S } } }`);
    expect(body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('answers syntax errors with 400 and no internals', async () => {
    const { status, body } = await gql('{ companies( { vid }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(JSON.stringify(body)).not.toMatch(/stacktrace/);
  });
});

describe('GraphQL on a server with its own limits', () => {
  let deep: TestServer;
  beforeAll(async () => {
    deep = await startTestServer({ MAX_TIERS: '9' });
  });
  afterAll(async () => {
    await deep.stop();
  });

  it('tells a client the most tiers an export may ask for, as the server is set', async () => {
    const res = await deep.post('/graphql', { query: '{ tierViewLimits { max_tiers } }' });
    expect(await res.json()).toEqual({ data: { tierViewLimits: { max_tiers: 9 } } });
    const started = await deep.post('/graphql', {
      query:
        'mutation { startTierView(input: { root_nodes: "boeing", num_tiers: 9, direction: supplier }) { run_id } }',
    });
    expect(((await started.json()) as GqlResult).errors).toBeUndefined();
  });
});

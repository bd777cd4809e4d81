import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';
import { splitStatements } from '../../src/store/cypher-files';
import { readSeed } from '../support/paths';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

async function problem(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as {
    status: number;
    title: string;
    detail: string;
    code: string;
    errors?: { field: string; reason: string }[];
  };
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+/);
  return body;
}

describe('authentication', () => {
  it('answers 401 without a key and 403 with an unknown key', async () => {
    const missing = await fetch(`${t.base}/v1/companies/`);
    expect((await problem(missing, 401)).code).toBe('UNAUTHENTICATED');
    // A 401 says how to authenticate (RFC 9110): a key in the service's header.
    expect(missing.headers.get('www-authenticate')).toBe('ApiKey header="X-SERVICE-KEY"');
    const unknown = await t.get('/v1/companies/', { 'X-SERVICE-KEY': 'not-a-key-not-a-key' });
    expect((await problem(unknown, 403)).code).toBe('FORBIDDEN');
    expect(unknown.headers.get('www-authenticate')).toBeNull();
  });

  it('protects GraphQL too', async () => {
    const res = await fetch(`${t.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ edge(edge_id: "e1") { edge_id } }' }),
    });
    await problem(res, 401);
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-SERVICE-KEY"');
  });

  it('says on /readyz where each thing the server derives from the graph stands', async () => {
    type Ready = { status: string; derived: Record<string, string> };
    const readyz = async () => (await (await fetch(`${t.base}/readyz`)).json()) as Ready;
    const settled = async (name: string) => {
      const deadline = Date.now() + 30_000;
      let body = await readyz();
      while (body.derived[name] === 'building' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        body = await readyz();
      }
      return body;
    };
    const first = await readyz();
    expect(first.status).toBe('ready');
    expect(Object.keys(first.derived).sort()).toEqual([
      'list_heads',
      'point_reads',
      'search_index',
      'walk_memory',
    ]);
    for (const state of Object.values(first.derived))
      expect(['building', 'ready', 'unavailable']).toContain(state);
    expect((await settled('walk_memory')).derived.walk_memory).toBe('ready');
    expect((await settled('point_reads')).derived.point_reads).toBe('ready');
    // The seed changed the data after start: asking /readyz starts the heads of long lists again,
    // with no list asked for.
    expect((await settled('list_heads')).derived).toEqual({
      search_index: 'ready',
      list_heads: 'ready',
      walk_memory: 'ready',
      point_reads: 'ready',
    });
  });

  it('leaves health, readiness, docs and the OpenAPI document open', async () => {
    for (const p of ['/healthz', '/readyz', '/openapi.json', '/docs', '/explorer']) {
      const res = await fetch(`${t.base}${p}`);
      expect([p, res.status]).toEqual([p, 200]);
    }
  });
});

describe('after the data changes under a server with no traffic', () => {
  it('rebuilds its search index without waiting for a request', async () => {
    const quiet = await startTestServer({}, null);
    try {
      const { store, search } = quiet.running;
      const before = search.generation;
      // As an import or seed by another process ends: nothing searches or lists afterwards.
      await store.runScript(splitStatements(readSeed('test-small.cypher')));
      expect(store.generation).not.toBe(before);
      const deadline = Date.now() + 15_000;
      while (search.generation !== store.generation && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      // (Asking /readyz would start it too: not asked here. The list heads follow by the same timer.)
      expect(search.generation).toBe(store.generation);
    } finally {
      await quiet.stop();
    }
  });
});

describe('GET /v1/paths/', () => {
  it('lists supplier chains from a company to one of its indirect suppliers, shortest first', async () => {
    const res = await t.get('/v1/paths/?from=boeing&to=delta&max_tiers=2');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      results: {
        length: number;
        weakest_confidence: number;
        companies: { vid: string }[];
        hops: unknown[];
      }[];
    };
    expect(body.results.map((c) => [c.length, c.weakest_confidence, c.companies.map((x) => x.vid)])).toEqual([
      [1, 0.5, ['boeing', 'delta']],
      [2, 0.6, ['boeing', 'bolt', 'delta']],
    ]);
    expect(body.results[1]!.hops).toEqual([
      {
        relationship_id: 'e1',
        supplier_vid: 'bolt',
        customer_vid: 'boeing',
        confidence_score: 0.9,
        latest_evidence_date: '2023-06-15T00:00:00.000Z',
      },
      {
        relationship_id: 'e5',
        supplier_vid: 'delta',
        customer_vid: 'bolt',
        confidence_score: 0.6,
        latest_evidence_date: '2020-07-07T00:00:00.000Z',
      },
    ]);
    expect(body.results[0]!.companies[0]).toEqual({ vid: 'boeing', name: 'Boeing Co' });
  });

  it('walks towards customers, never through a company twice', async () => {
    const down = (await (
      await t.get('/v1/paths?from=delta&to=boeing&direction=customer&max_tiers=4')
    ).json()) as {
      results: { companies: { vid: string }[] }[];
    };
    expect(down.results.map((c) => c.companies.map((x) => x.vid))).toEqual([
      ['delta', 'boeing'],
      ['delta', 'bolt', 'boeing'],
    ]);
    const none = (await (await t.get('/v1/paths/?from=boeing&to=delta&direction=customer')).json()) as {
      results: unknown[];
    };
    expect(none.results).toEqual([]);
  });

  it('answers 404 for an unknown company and 400 for bad parameters', async () => {
    expect((await problem(await t.get('/v1/paths/?from=boeing&to=nobody'), 404)).code).toBe('NOT_FOUND');
    expect((await t.get('/v1/paths/?from=boeing')).status).toBe(400);
    expect((await t.get('/v1/paths/?from=boeing&to=delta&max_tiers=99')).status).toBe(400);
    expect((await t.get('/v1/paths/?from=boeing&to=delta&direction=up')).status).toBe(400);
    expect((await t.get('/v1/paths/?from=boeing&to=boeing')).status).toBe(400);
  });
});

describe('GET /v1/companies/suggest/', () => {
  it('suggests by word beginnings, allowing the last word to be cut short', async () => {
    const res = await t.get('/v1/companies/suggest/?q=acme%20aero');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      results: [
        {
          vid: 'acme-hold',
          name: 'Acme Aerospace Holdings',
          matched_name: 'Acme Aerospace Holdings',
          // Namesakes are told apart by it, as in relationship lists.
          country: 'United Kingdom of Great Britain and Northern Ireland',
        },
      ],
    });
    const subs = (await (
      await t.get('/v1/companies/suggest?q=acme&include_subsidiaries=true&limit=2')
    ).json()) as {
      results: { vid: string }[];
    };
    expect(subs.results.map((r) => r.vid).sort()).toEqual(['acme-gmbh', 'acme-hold']);
  });

  it('refuses a missing q and an out-of-range limit', async () => {
    expect((await problem(await t.get('/v1/companies/suggest/'), 400)).errors?.[0]?.field).toBe('query.q');
    expect((await t.get('/v1/companies/suggest/?q=a&limit=21')).status).toBe(400);
  });
});

describe('GET /v1/companies/', () => {
  it('ranks by pg_trgm similarity and reports it', async () => {
    const res = await t.get('/v1/companies/?name=boeing');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      next: string | null;
      previous: string | null;
      results: Record<string, unknown>[];
    };
    expect(body.previous).toBeNull();
    expect(body.next).toBeNull();
    expect(body.results[0]).toEqual({
      search_similarity: 0.7,
      word_similarity: 1,
      matched_name: 'Boeing Co',
      vid: 'boeing',
      cid_id: 'boeing',
      name: 'Boeing Co',
      domains: ['boeing.example'],
      websites: ['https://www.boeing.example/'],
      company_legal_name: 'The Boeing Company',
      description: 'Boeing Co makes things for the test graph.',
      count_supplier_evidence: 6,
      count_customer_evidence: 1,
      count_customers: 1,
      count_suppliers: 4,
    });
  });

  it('takes an industry filter', async () => {
    const vids = async (query: string) => {
      const res = await t.get(`/v1/companies/?${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { results: { vid: string }[] }).results.map((r) => r.vid);
    };
    expect(await vids('industry=aerospace')).toEqual(['boeing']);
    expect(await vids('industry=NAICS:336411&name=boeing')).toEqual(['boeing']);
    expect(await vids('industry=Steel')).toEqual([]);
  });

  it('answers from the search index alone, without a store read per result', async () => {
    const reads = jest.spyOn(t.running.store, 'getCompanies');
    const getCompany = jest.spyOn(t.running.store, 'getCompany');
    try {
      const res = await t.get('/v1/companies/?name=acme&include_subsidiaries=true&limit=5');
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        results: { vid: string; cid_id: string; count_suppliers: number }[];
      };
      expect(body.results.length).toBeGreaterThan(1);
      expect(body.results.every((r) => typeof r.cid_id === 'string' && r.cid_id.length > 0)).toBe(true);
      expect(reads).not.toHaveBeenCalled();
      expect(getCompany).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
      getCompany.mockRestore();
    }
  });

  it('searches only cluster parents and unclustered companies unless asked', async () => {
    const plain = (await (await t.get('/v1/companies/?name=acme%20aerospace')).json()) as {
      results: { vid: string }[];
    };
    expect(plain.results.map((r) => r.vid)).toEqual(['acme-hold']);
    const all = (await (
      await t.get('/v1/companies/?name=acme%20aerospace&include_subsidiaries=true')
    ).json()) as {
      results: { vid: string }[];
    };
    expect(all.results.map((r) => r.vid).sort()).toEqual(['acme-gmbh', 'acme-hold', 'acme-jp']);
  });

  it('pages with absolute next and previous links that keep every parameter', async () => {
    const first = (await (
      await t.get('/v1/companies/?name=acme%20aerospace&include_subsidiaries=true&limit=2')
    ).json()) as {
      next: string;
      previous: null;
      results: unknown[];
    };
    expect(first.results).toHaveLength(2);
    const next = new URL(first.next);
    expect(next.origin).toBe(t.base);
    expect(next.pathname).toBe('/v1/companies/');
    expect(Object.fromEntries(next.searchParams)).toEqual({
      name: 'acme aerospace',
      include_subsidiaries: 'true',
      limit: '2',
      offset: '2',
    });
    const second = (await (await t.get(`${next.pathname}${next.search}`)).json()) as {
      next: null;
      previous: string;
      results: unknown[];
    };
    expect(second.results).toHaveLength(1);
    expect(second.next).toBeNull();
    expect(new URL(second.previous).searchParams.get('offset')).toBe('0');
  });

  it('filters by city, country, website and identifier', async () => {
    const vids = async (q: string) =>
      ((await (await t.get(`/v1/companies/?${q}`)).json()) as { results: { vid: string }[] }).results
        .map((r) => r.vid)
        .sort();
    expect(await vids('city=stuttgart')).toEqual(['mueller']);
    expect(await vids('city=Stuttgart&include_subsidiaries=true')).toEqual(['acme-gmbh', 'mueller']);
    expect(await vids('country=germany&include_subsidiaries=1')).toEqual(['acme-gmbh', 'mueller']);
    expect(await vids('website=https://www.boeing.example/about')).toEqual(['boeing']);
    expect(await vids('identifier=Q66')).toEqual(['boeing']);
    expect(await vids('identifier=Q66&name=bolt')).toEqual([]);
    expect(await vids('country=Atlantis')).toEqual([]);
  });

  it('takes a country as an ISO code or a short name as well as the long form', async () => {
    const vids = async (q: string) =>
      ((await (await t.get(`/v1/companies/?${q}`)).json()) as { results: { vid: string }[] }).results.map(
        (r) => r.vid,
      );
    for (const country of ['DE', 'deu', 'Deutschland', 'germany']) {
      expect([country, (await vids(`country=${country}&include_subsidiaries=1`)).sort()]).toEqual([
        country,
        ['acme-gmbh', 'mueller'],
      ]);
    }
    for (const country of ['GB', 'UK', 'United%20Kingdom', 'GBR']) {
      expect([country, await vids(`country=${country}`)]).toEqual([country, ['acme-hold']]);
    }
    expect(await vids('country=US&name=boeing')).toEqual(['boeing']);
  });

  it('finds names holding the query as a word below the similarity threshold, unless sort=similarity', async () => {
    const search = async (q: string) =>
      (
        (await (await t.get(`/v1/companies/?${q}`)).json()) as {
          results: {
            vid: string;
            search_similarity: number;
            word_similarity: number;
            matched_name: string;
          }[];
        }
      ).results;
    const relevant = await search('name=acme');
    expect(relevant[0]).toMatchObject({
      vid: 'acme-hold',
      word_similarity: 1,
      matched_name: 'Acme Aerospace Holdings',
    });
    expect(relevant[0]!.search_similarity).toBeLessThan(0.3);
    expect(await search('name=acme&sort=similarity')).toEqual([]);
    const res = await t.get('/v1/companies/?name=acme&sort=best');
    expect(res.status).toBe(400);
  });

  it('matches an acronym of the significant words and says so', async () => {
    const body = (await (await t.get('/v1/companies/?name=AAH')).json()) as {
      results: { vid: string; matched_name: string }[];
    };
    expect(body.results[0]).toMatchObject({ vid: 'acme-hold', matched_name: 'AAH' });
  });

  it('omits search_similarity when no name is given and orders by relationships', async () => {
    const body = (await (await t.get('/v1/companies/?limit=3')).json()) as {
      results: Record<string, unknown>[];
    };
    expect(body.results[0]!.vid).toBe('boeing');
    expect(body.results[0]).not.toHaveProperty('search_similarity');
    expect(body.results[0]).not.toHaveProperty('word_similarity');
    expect(body.results[0]).not.toHaveProperty('matched_name');
  });

  it('answers with and without the trailing slash', async () => {
    expect((await t.get('/v1/companies?name=bolt')).status).toBe(200);
    expect((await t.get('/v1/companies/?name=bolt')).status).toBe(200);
  });

  it.each([
    ['limit=101', 'query.limit'],
    ['limit=0', 'query.limit'],
    ['limit=abc', 'query.limit'],
    ['offset=-1', 'query.offset'],
    ['include_subsidiaries=maybe', 'query.include_subsidiaries'],
    ['min_similarity=0', 'query.min_similarity'],
    ['nmae=boeing', 'query.nmae'],
    ['name=a&name=b', 'query.name'],
    ['name=', 'query.name'],
  ])('refuses %s with 400 naming %s', async (qs, field) => {
    const body = await problem(await t.get(`/v1/companies/?${qs}`), 400);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.errors?.map((e) => e.field)).toContain(field);
  });
});

describe('GET /v1/companies/{vid}/', () => {
  it('returns the whole profile in the field order of the specification', async () => {
    const res = await t.get('/v1/companies/boeing/');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'vid',
      'cid_id',
      'name',
      'domains',
      'websites',
      'company_legal_name',
      'description',
      'count_supplier_evidence',
      'count_customer_evidence',
      'count_customers',
      'count_suppliers',
      'identifiers',
      'domiciled_country',
      'incorporated_country',
      'incorporation_date',
      'ipo_date',
      'is_active',
      'is_freight_forwarder',
      'is_public',
      'hq_phone_number',
      'addresses',
      'is_cluster_parent',
      'aliases',
      'industry',
      'industry_code_system',
      'industry_code',
    ]);
    expect(body.identifiers).toEqual([
      { type: 'LEI', value: 'RVDPPPGHCGZ40J4BQ305' },
      { type: 'Wikidata', value: 'Q66' },
    ]);
    expect(body.incorporation_date).toBe('1990-01-01T00:00:00.000Z');
    expect(body.is_public).toBe(true);
  });

  it('answers 404 for an unknown vid, with or without slash', async () => {
    expect((await problem(await t.get('/v1/companies/nope/'), 404)).code).toBe('NOT_FOUND');
    await problem(await t.get('/v1/companies/nope'), 404);
  });

  it('refuses unknown query parameters', async () => {
    await problem(await t.get('/v1/companies/boeing/?x=1'), 400);
  });
});

describe('relationship lists', () => {
  type Item = Record<string, Record<string, unknown>>;
  const list = async (p: string) =>
    (await (await t.get(p)).json()) as { next: string | null; results: Item[] };

  it('lists suppliers under `supplier` with the spec fields, most confident first', async () => {
    const body = await list('/v1/companies/boeing/suppliers/');
    expect(body.results.map((i) => i.supplier!.vid)).toEqual(['bolt', 'acme-gmbh', 'acme-jp', 'delta']);
    expect(body.results[0]).toEqual({
      supplier: {
        vid: 'bolt',
        name: 'Bolt Castings Ltd',
        company_legal_name: 'Bolt Castings Limited',
        description: 'Bolt Castings Ltd makes things for the test graph.',
        domains: ['bolt.example'],
        country: 'Ireland',
        count_supplier_evidence: 1,
        count_customer_evidence: 2,
        count_customers: 1,
        count_suppliers: 1,
      },
      relationship: {
        confidence_score: 0.9,
        latest_relationship_date: '2023-06-15T00:00:00.000Z',
        relationship_type: 'edge',
        relationship_id: 'e1',
        edge_ids: ['e1'],
      },
      evidences: { evidence_types: ['text'] },
    });
  });

  it('lists customers under `customer`', async () => {
    const body = await list('/v1/companies/delta/customers');
    expect(body.results.map((i) => Object.keys(i))).toEqual([
      ['customer', 'relationship', 'evidences'],
      ['customer', 'relationship', 'evidences'],
    ]);
    expect(body.results.map((i) => i.customer!.vid)).toEqual(['bolt', 'boeing']);
  });

  it('filters by confidence_score and date, and pages', async () => {
    expect((await list('/v1/companies/boeing/suppliers/?confidence_score=0.75')).results).toHaveLength(2);
    // Evidence "later than" 2022-05-04 includes 2022-05-05; later than 2022-05-05 does not.
    expect((await list('/v1/companies/boeing/suppliers/?date=2022-05-04')).results).toHaveLength(3);
    expect((await list('/v1/companies/boeing/suppliers/?date=2022-05-05')).results).toHaveLength(2);
    const page = await list('/v1/companies/boeing/suppliers/?limit=2&confidence_score=0.1');
    expect(page.results).toHaveLength(2);
    expect(Object.fromEntries(new URL(page.next!).searchParams)).toEqual({
      confidence_score: '0.1',
      limit: '2',
      offset: '2',
    });
  });

  it('groups by cluster in the cluster variants', async () => {
    const body = await list('/v1/companies/acme-jp/cluster_customers/');
    expect(body.results).toHaveLength(1);
    expect(body.results[0]!.customer!.vid).toBe('boeing');
    expect(body.results).toMatchObject([
      {
        relationship: {
          confidence_score: 0.8,
          latest_relationship_date: '2024-01-10T00:00:00.000Z',
          relationship_type: 'cluster_edge',
          relationship_id: 'K1~boeing',
          edge_ids: ['e3', 'e4'],
        },
      },
    ]);
    const sup = await list('/v1/companies/acme-gmbh/cluster_suppliers/');
    expect(sup.results.map((i) => i.supplier!.vid)).toEqual(['mueller']);
  });

  it('answers an empty list for a company without relationships, 404 for an unknown one', async () => {
    expect((await list('/v1/companies/lonely/suppliers/')).results).toEqual([]);
    for (const p of ['suppliers', 'customers', 'cluster_suppliers', 'cluster_customers']) {
      await problem(await t.get(`/v1/companies/nope/${p}/`), 404);
    }
  });

  it.each([
    ['confidence_score=2', 'confidence_score'],
    ['confidence_score=high', 'query.confidence_score'],
    ['date=2023-02-30', 'date'],
    ['date=yesterday', 'date'],
    ['limit=1000', 'limit'],
  ])('refuses %s with 400', async (qs, field) => {
    const body = await problem(await t.get(`/v1/companies/boeing/suppliers/?${qs}`), 400);
    expect(body.errors?.some((e) => e.field.endsWith(field))).toBe(true);
  });
});

describe('GET /v1/edges/{edge_id}/', () => {
  it('returns the edge with its evidence', async () => {
    const res = await t.get('/v1/edges/e1/');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & { evidences: Record<string, unknown>[] };
    expect(Object.keys(body)).toEqual([
      'edge_id',
      'supplier_id',
      'customer_id',
      'label',
      'status_code',
      'latest_edge_date',
      'latest_finalized_edge_date',
      'last_modified_on',
      'confidence_score',
      'hs_codes',
      'evidences',
    ]);
    expect(body).toMatchObject({
      edge_id: 'e1',
      supplier_id: 'bolt',
      customer_id: 'boeing',
      label: 'supply',
      status_code: 1,
      hs_codes: ['7326'],
    });
    expect(body.evidences.map((e) => e.id)).toEqual(['ev2', 'ev1']);
    expect(Object.keys(body.evidences[0]!)).toEqual([
      'id',
      'date',
      'type',
      'url',
      'domain',
      'status_id',
      'provided_by_customer',
      'metadata',
      'finalised_on',
      'created_on',
      'last_modified_on',
    ]);
  });

  it('answers 404 for an unknown edge', async () => {
    await problem(await t.get('/v1/edges/nope'), 404);
  });
});

describe('errors', () => {
  it('answers unknown routes with a 404 problem', async () => {
    expect((await problem(await t.get('/v1/nothing-here'), 404)).code).toBe('NOT_FOUND');
    await problem(await fetch(`${t.base}/nothing-here`), 404);
  });

  it('never answers 500 to odd input', async () => {
    const odd = [
      '/v1/companies/%00/',
      '/v1/companies/' + 'x'.repeat(500) + '/',
      '/v1/companies/?name=' + encodeURIComponent('\u0000\u0001'),
      '/v1/companies/?name=' + encodeURIComponent('💥'.repeat(50)),
      '/v1/companies/?limit=1e3',
      '/v1/companies/?offset=99999999999999999999',
      '/v1/edges/%E0%A4%A',
      "/v1/companies/'%20OR%201=1/",
      '/v1/companies/boeing/suppliers/?date=2023-13-01',
    ];
    for (const p of odd) {
      const res = await t.get(p);
      expect([p, res.status < 500]).toEqual([p, true]);
    }
  });

  it('refuses a query parameter that is not valid percent-encoding, as it refuses such a path', async () => {
    for (const [query, field] of [
      ['name=%E0%A4%A', 'query.name'],
      ['name=%E0%A4', 'query.name'],
      ['limit=5&name=a%zz', 'query.name'],
      ['na%FFme=x', 'query.na%FFme'],
    ]) {
      const res = await t.get(`/v1/companies/?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      const problem = (await res.json()) as { errors: { field: string; reason: string }[] };
      expect(problem.errors).toEqual([{ field, reason: 'not valid percent-encoding' }]);
    }
    // Valid escapes and a + for a space are read as before.
    const ok = await t.get('/v1/companies/?name=%42oeing+Co&limit=%31');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { results: { vid: string }[] }).results[0]!.vid).toBe('boeing');
  });

  it('carries a request id on every response', async () => {
    const res = await t.get('/v1/companies/nope/');
    const body = (await res.json()) as { request_id: string };
    expect(res.headers.get('x-request-id')).toBe(body.request_id);
  });
});

describe('paging near MAX_OFFSET', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ MAX_OFFSET: '3' });
  });
  afterAll(async () => {
    await small.stop();
  });

  it('never links to a page past MAX_OFFSET: every next link followed answers', async () => {
    type Page = { next: string | null; results: unknown[] };
    let url: string | null = `${small.base}/v1/companies/?include_subsidiaries=true&limit=2`;
    const offsets: number[] = [];
    let last: Page | null = null;
    while (url) {
      const res = await small.get(new URL(url).pathname + new URL(url).search);
      expect(res.status).toBe(200);
      last = (await res.json()) as Page;
      offsets.push(Number(new URL(url).searchParams.get('offset') ?? 0));
      url = last.next;
    }
    // Eight companies: the page at offset 2 is the last one reachable, with more rows after it.
    expect(offsets).toEqual([0, 2]);
    expect(last!.results).toHaveLength(2);
    // The page a next link would have named is refused, as any offset past the setting is.
    const beyond = await small.get('/v1/companies/?include_subsidiaries=true&limit=2&offset=4');
    expect((await problem(beyond, 400)).errors?.[0]?.field).toBe('query.offset');
  });
});

describe('request bodies', () => {
  const start = { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' };
  const send = (body: string | Uint8Array, headers: Record<string, string>) =>
    fetch(`${t.base}/v1/tierviewjob/`, {
      method: 'POST',
      headers: { 'X-SERVICE-KEY': TEST_KEY, ...headers },
      body,
    });

  it('refuses a body of another media type, or of none named, with 415', async () => {
    const json = JSON.stringify(start);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const body = await problem(await send(json, { 'content-type': type }), 415);
      expect(body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(body.detail).toBe('Send the body as application/json.');
    }
    // JSON in another charset than UTF-8: the charset is what is wrong, and the answer says so.
    const latin1 = await problem(
      await send(json, { 'content-type': 'application/json; charset=latin1' }),
      415,
    );
    expect(latin1.detail).toBe('Send the body as application/json in UTF-8 (charset "latin1" is not read).');
    // Bytes: fetch names no media type for them.
    expect((await problem(await send(new TextEncoder().encode(json), {}), 415)).code).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('leaves routes that read no body alone, whatever is sent with them', async () => {
    // curl -d '{}' names a form: a cancel reads no body, and is answered for the run it names.
    const cancel = await fetch(`${t.base}/v1/jobs/987654/cancel/`, {
      method: 'POST',
      headers: { 'X-SERVICE-KEY': TEST_KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body: '{}',
    });
    expect((await problem(cancel, 404)).code).toBe('NOT_FOUND');
    // A method a route does not take is that, whatever the body.
    const put = await fetch(`${t.base}/v1/companies/boeing/`, {
      method: 'PUT',
      headers: { 'X-SERVICE-KEY': TEST_KEY, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect((await problem(put, 405)).code).toBe('METHOD_NOT_ALLOWED');
  });

  it('still takes a request without a body, and says what a JSON body must be', async () => {
    // A cancel has no body: it is answered for what it names (here no run of this key).
    const cancel = await fetch(`${t.base}/v1/jobs/987654/cancel/`, {
      method: 'POST',
      headers: { 'X-SERVICE-KEY': TEST_KEY },
    });
    expect((await problem(cancel, 404)).code).toBe('NOT_FOUND');
    for (const text of ['null', '"x"', '{"root_nodes":']) {
      const body = await problem(await send(text, { 'content-type': 'application/json' }), 400);
      expect(body.detail).toMatch(/must be a JSON object/);
    }
  });

  it('names the largest body it takes', async () => {
    const big = JSON.stringify({ ...start, countries: 'x'.repeat(100_000) });
    const body = await problem(await send(big, { 'content-type': 'application/json' }), 413);
    expect(body.detail).toBe('The request body is too large: at most 65,536 bytes here.');
  });
});

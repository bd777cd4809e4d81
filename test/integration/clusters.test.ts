import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const QUERY = `query ($vid: ID!, $limit: Int, $offset: Int) {
  company(vid: $vid) {
    cluster_parent { vid name is_cluster_parent }
    cluster_members(limit: $limit, offset: $offset) { has_more results { vid name country is_cluster_parent } }
  }
}`;

interface Result {
  data?: {
    company: {
      cluster_parent: { vid: string; is_cluster_parent: boolean };
      cluster_members: { has_more: boolean; results: { vid: string; is_cluster_parent: boolean }[] };
    };
  } | null;
  errors?: { extensions?: { code?: string } }[];
}

async function cluster(variables: Record<string, unknown>): Promise<Result> {
  return (await (await t.post('/graphql', { query: QUERY, variables })).json()) as Result;
}

describe('GraphQL cluster fields', () => {
  it("names a member's cluster parent and lists the members, the parent first", async () => {
    const { data, errors } = await cluster({ vid: 'acme-jp', limit: 2 });
    expect(errors).toBeUndefined();
    expect(data!.company.cluster_parent).toEqual({
      vid: 'acme-hold',
      name: 'Acme Aerospace Holdings',
      is_cluster_parent: true,
    });
    expect(data!.company.cluster_members.results.map((m) => m.vid)).toEqual(['acme-hold', 'acme-gmbh']);
    expect(data!.company.cluster_members.has_more).toBe(true);
    const next = await cluster({ vid: 'acme-jp', limit: 2, offset: 2 });
    expect(next.data!.company.cluster_members).toEqual({
      has_more: false,
      results: [
        { vid: 'acme-jp', name: 'Acme Aerospace Japan K.K.', country: 'Japan', is_cluster_parent: false },
      ],
    });
  });

  it('answers a company outside any cluster as its own cluster of one', async () => {
    const { data } = await cluster({ vid: 'boeing' });
    expect(data!.company.cluster_parent.vid).toBe('boeing');
    expect(data!.company.cluster_members.results.map((m) => m.vid)).toEqual(['boeing']);
  });

  it('refuses a page beyond the limits', async () => {
    const { errors } = await cluster({ vid: 'boeing', limit: 1000 });
    expect(errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });
});

describe('GET /v1/clusters/{cid_id}/', () => {
  it('answers the parent and a page of members with links', async () => {
    const res = await t.get('/v1/clusters/K1/?limit=2');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      cid_id: 'K1',
      parent: {
        vid: 'acme-hold',
        name: 'Acme Aerospace Holdings',
        country: 'United Kingdom of Great Britain and Northern Ireland',
        is_cluster_parent: true,
      },
      next: `${t.base}/v1/clusters/K1/?limit=2&offset=2`,
      previous: null,
      results: [
        expect.objectContaining({ vid: 'acme-hold' }),
        expect.objectContaining({ vid: 'acme-gmbh', is_cluster_parent: false }),
      ],
    });
    const last = (await (await t.get('/v1/clusters/K1/?limit=2&offset=2')).json()) as {
      results: { vid: string }[];
      next: unknown;
    };
    expect([last.results.map((m) => m.vid), last.next]).toEqual([['acme-jp'], null]);
  });

  it('treats a company outside any cluster as a cluster of one, and refuses unknown clusters and parameters', async () => {
    const one = (await (await t.get('/v1/clusters/boeing/')).json()) as {
      parent: { vid: string };
      results: unknown[];
    };
    expect([one.parent.vid, one.results.length]).toEqual(['boeing', 1]);
    const unknown = await t.get('/v1/clusters/nope/');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('NOT_FOUND');
    expect((await t.get('/v1/clusters/K1/?name=x')).status).toBe(400);
  });
});

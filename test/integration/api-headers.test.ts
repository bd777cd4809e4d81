import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

/**
 * What /v1 and /graphql answers tell browsers and caches: the key travels in X-SERVICE-KEY, not
 * Authorization, so a shared cache would not know them for one client's, and job answers hold
 * download links anyone may follow.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const headersOf = (res: Response) => [
  res.status,
  res.headers.get('x-content-type-options'),
  res.headers.get('cache-control'),
];
const gql = (query: string, variables: Record<string, unknown> = {}) =>
  t.post('/graphql', { query, variables });

describe('/v1 answers', () => {
  it('are private data reads, revalidated by their ETag, and never sniffed', async () => {
    const profile = await t.get('/v1/companies/boeing/');
    expect(headersOf(profile)).toEqual([200, 'nosniff', 'private']);
    const tag = profile.headers.get('etag');
    expect(tag).toMatch(/^W\/".+"$/);
    const again = await t.get('/v1/companies/boeing/', { 'if-none-match': tag! });
    expect([...headersOf(again), again.headers.get('etag')]).toEqual([304, 'nosniff', 'private', tag]);

    const suppliers = await t.get('/v1/companies/boeing/suppliers/');
    expect(headersOf(suppliers)).toEqual([200, 'nosniff', 'private']);
    const edgeId = ((await suppliers.json()) as { results: { relationship: { edge_ids: string[] } }[] })
      .results[0]!.relationship.edge_ids[0]!;
    for (const path of [
      '/v1/companies/?name=boeing',
      `/v1/edges/${encodeURIComponent(edgeId)}/`,
      '/v1/clusters/K1/',
      '/v1/companies/nobody/',
      '/v1/companies/boeing/suppliers/?limit=0',
    ]) {
      const res = await t.get(path);
      expect([path, ...headersOf(res).slice(1)]).toEqual([path, 'nosniff', 'private']);
    }
    // Refused before any route: no key, an unknown path.
    const noKey = await fetch(`${t.base}/v1/companies/boeing/`);
    expect(headersOf(noKey)).toEqual([401, 'nosniff', 'private']);
    expect(headersOf(await t.get('/v1/nothing-here/'))).toEqual([404, 'nosniff', 'private']);
  });

  it('about jobs are kept by no cache: their start, state, list and cancel', async () => {
    const started = await t.post('/v1/tierviewjob/', {
      root_nodes: 'boeing',
      num_tiers: '1',
      direction: 'supplier',
    });
    expect(headersOf(started)).toEqual([200, 'nosniff', 'private, no-store']);
    const runId = ((await started.json()) as { run_id: number }).run_id;
    let state = '';
    let output: unknown = null;
    for (let i = 0; i < 300 && state !== 'TERMINATED'; i++) {
      const res = await t.get(`/v1/jobs/${runId}`);
      expect(headersOf(res)).toEqual([200, 'nosniff', 'private, no-store']);
      ({
        output,
        state: { life_cycle_state: state },
      } = (await res.json()) as {
        output: unknown;
        state: { life_cycle_state: string };
      });
      if (state !== 'TERMINATED') await new Promise((r) => setTimeout(r, 50));
    }
    // The answer that holds the download links.
    expect(JSON.stringify(output)).toContain('/downloads/');
    for (const res of [
      await t.get(`/v1/jobs/${runId}/`),
      await t.get('/v1/jobs/'),
      await t.get('/v1/jobs/999999/'),
      await t.post(`/v1/jobs/${runId}/cancel`, {}),
      await t.post('/v1/tierviewjob/', { num_tiers: '99' }),
    ])
      expect([res.url, ...headersOf(res).slice(1)]).toEqual([res.url, 'nosniff', 'private, no-store']);
  });
});

describe('/graphql answers', () => {
  it('are kept by no cache and never sniffed, job runs and data alike, refusals too', async () => {
    const start = await gql(
      'mutation { startTierView(input: { root_nodes: "boeing", num_tiers: 1, direction: supplier }) { run_id } }',
    );
    expect(headersOf(start)).toEqual([200, 'nosniff', 'private, no-store']);
    const runId = ((await start.json()) as { data: { startTierView: { run_id: string } } }).data.startTierView
      .run_id;
    const job = await gql('query($id: ID!) { job(run_id: $id) { run_id output { result } } }', { id: runId });
    expect(headersOf(job)).toEqual([200, 'nosniff', 'private, no-store']);
    expect(headersOf(await gql('{ company(vid: "boeing") { vid name } }'))).toEqual([
      200,
      'nosniff',
      'private, no-store',
    ]);
    const byGet = await t.get(`/graphql?query=${encodeURIComponent('{ jobs { results { run_id } } }')}`);
    expect(headersOf(byGet)).toEqual([200, 'nosniff', 'private, no-store']);
    const noKey = await fetch(`${t.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ jobs { results { run_id } } }' }),
    });
    expect(headersOf(noKey)).toEqual([401, 'nosniff', 'private, no-store']);
    expect(headersOf(await gql('{ nothing }'))).toEqual([400, 'nosniff', 'private, no-store']);
  });
});

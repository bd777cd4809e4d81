import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

describe('CORS', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(
      { CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' },
      'test-small.cypher',
    );
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers preflights of a listed origin without a key', async () => {
    const res = await fetch(`${t.base}/v1/companies/boeing/`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-service-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-headers')).toContain('X-SERVICE-KEY');
    expect(res.headers.get('access-control-allow-headers')).toContain('Apollo-Require-Preflight');
    // A page may start an export under a key of its own, and learn that a retry found its run.
    expect(res.headers.get('access-control-allow-headers')).toContain('Idempotency-Key');
    expect(res.headers.get('access-control-expose-headers')).toContain('Idempotent-Replayed');
    // As every /v1 answer.
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('private');
  });

  it("answers a GraphQL GET that carries the key, with none of Apollo's headers beside it", async () => {
    const res = await t.get(`/graphql?query=${encodeURIComponent('{ company(vid: "boeing") { vid } }')}`, {
      origin: 'https://app.example.com',
    });
    expect([res.status, await res.json()]).toEqual([200, { data: { company: { vid: 'boeing' } } }]);
    // A mutation still needs POST.
    const mutation = await t.get(
      `/graphql?query=${encodeURIComponent('mutation { cancelJob(run_id: "1") { run_id } }')}`,
    );
    expect(mutation.status).toBe(405);
  });

  it('lets a listed origin read answers, and gives other origins nothing', async () => {
    const ok = await t.get('/v1/companies/boeing/', { origin: 'http://localhost:5173' });
    expect([ok.status, ok.headers.get('access-control-allow-origin')]).toEqual([
      200,
      'http://localhost:5173',
    ]);
    const other = await t.get('/v1/companies/boeing/', { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const gql = await t.post('/graphql', { query: '{ __typename }' }, { origin: 'https://app.example.com' });
    expect(gql.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });

  it('sends no CORS headers by default', async () => {
    const plain = await startTestServer({}, null);
    try {
      const res = await fetch(`${plain.base}/v1/companies/`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await plain.stop();
    }
  });
});

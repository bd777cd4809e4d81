import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { getIntrospectionQuery } from 'graphql';
import { ERROR_LEVEL, recordingLogger, startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: { field: string; reason: string }[];
}

async function problem(res: Response, status: number): Promise<Problem> {
  const body = await res.text();
  expect([res.status, body]).toEqual([status, expect.any(String)]);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const p = JSON.parse(body) as Problem;
  expect(p.status).toBe(status);
  return p;
}

interface OpenApi {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
}

/** A documented path with its parameters filled in with values that exist in the test graph. */
function concrete(path: string): string {
  return path.replace('{vid}', 'boeing').replace('{edge_id}', 'e1').replace('{run_id}', '1');
}

describe('client mistakes are 4xx problems, never internal errors', () => {
  let t: TestServer;
  // From info up, so that the server's own start shows the recording reaches it (see the last test).
  const recorded = recordingLogger('info');
  let doc: OpenApi;
  beforeAll(async () => {
    t = await startTestServer({}, 'test-small.cypher', recorded.log);
    doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as OpenApi;
  });
  afterAll(async () => {
    await t.stop();
  });

  it('refuses integers out of range on every list route with 400 naming the parameter', async () => {
    const lists = Object.entries(doc.paths).filter(([, methods]) =>
      methods.get?.parameters?.some((p) => p.name === 'offset'),
    );
    expect(lists.length).toBeGreaterThanOrEqual(5);
    for (const [path] of lists) {
      for (const [name, value] of [
        ['offset', '2147483648'],
        ['limit', '999999999999999'],
        ['offset', '-2147483649'],
        ['limit', '-2147483649'],
      ] as const) {
        const res = await t.get(`${concrete(path)}?${name}=${value}`);
        const p = await problem(res, 400);
        expect([path, p.code, p.errors?.map((e) => e.field)]).toEqual([
          path,
          'BAD_REQUEST',
          [`query.${name}`],
        ]);
      }
    }
  });

  it("counts a suggestion's 200-character limit in characters, not UTF-16 units", async () => {
    // 150 characters, 300 UTF-16 units: within the limit, counted as characters.
    const emoji = '🙂'.repeat(150);
    const fine = await t.post('/graphql', { query: `{ suggest_companies(q: "${emoji}") { vid } }` });
    expect([fine.status, await fine.json()]).toEqual([200, { data: { suggest_companies: [] } }]);
  });

  it('names each refused field once, and does not echo a huge unknown id whole', async () => {
    for (const [path, field, reason] of [
      ['/v1/companies/?name=%20', 'query.name', 'must not be empty'],
      ['/v1/companies/suggest/?q=%20', 'query.q', 'must not be empty'],
      // 201 characters, 402 UTF-16 units: over the limit however counted.
      [
        `/v1/companies/suggest/?q=${encodeURIComponent('🙂'.repeat(201))}`,
        'query.q',
        'must be at most 200 characters',
      ],
      // Control characters are refused in text as they are in path ids: no name holds them.
      ['/v1/companies/?name=nord%00wind', 'query.name', 'must not hold control characters'],
      ['/v1/companies/?city=%1BIstanbul', 'query.city', 'must not hold control characters'],
      ['/v1/companies/suggest/?q=nord%7F', 'query.q', 'must not hold control characters'],
      ['/v1/paths/?from=c57dtbp&to=a%00b', 'query.to', 'must not hold control characters'],
    ] as const) {
      const p = await problem(await t.get(path), 400);
      expect([path, p.errors, p.detail]).toEqual([path, [{ field, reason }], `${field}: ${reason}`]);
    }
    // Paths refuse such an id before looking; GraphQL arguments are looked up, and the answer
    // says which id was not found without sending 5,000 characters back.
    const res = await t.post('/graphql', { query: `{ company(vid: "${'x'.repeat(5000)}") { vid } }` });
    const { errors } = (await res.json()) as { errors: { message: string }[] };
    expect(errors[0]?.message).toMatch(/^No company with id 'x{20,}…'/);
    expect(errors[0]?.message.length).toBeLessThan(300);
  });

  it('serves the deepest page allowed on every list route (the embedded engine crashed on a large SKIP)', async () => {
    const lists = Object.keys(doc.paths).filter(
      (p) => p.startsWith('/v1/companies/{vid}/') && p !== '/v1/companies/{vid}/',
    );
    expect(lists.length).toBe(4);
    for (const path of lists) {
      for (const vid of ['acme-hold', 'boeing']) {
        const res = await t.get(`${path.replace('{vid}', vid)}?offset=10000&limit=100`);
        expect([path, res.status]).toEqual([path, 200]);
        expect(((await res.json()) as { results: unknown[] }).results).toEqual([]);
      }
    }
    // The page is still cut where it should be.
    const all = (await (await t.get('/v1/companies/boeing/suppliers/?limit=100')).json()) as {
      results: unknown[];
    };
    const second = (await (await t.get('/v1/companies/boeing/suppliers/?offset=1&limit=2')).json()) as {
      results: unknown[];
    };
    expect(all.results.length).toBeGreaterThanOrEqual(3);
    expect(second.results).toEqual(all.results.slice(1, 3));
  });

  it('answers a wrong method on a /v1 route with 405 and Allow', async () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      const documented = Object.keys(methods).map((m) => m.toUpperCase());
      for (const method of ['PUT', 'PATCH', 'POST', 'DELETE']) {
        if (documented.includes(method)) continue;
        const res = await fetch(`${t.base}${concrete(path)}`, {
          method,
          headers: { 'X-SERVICE-KEY': TEST_KEY },
        });
        const p = await problem(res, 405);
        expect(p.code).toBe('METHOD_NOT_ALLOWED');
        const allow = (res.headers.get('allow') ?? '').split(', ');
        for (const m of documented) expect([path, allow]).toEqual([path, expect.arrayContaining([m])]);
      }
    }
    // The open routes too.
    for (const path of ['/healthz', '/openapi.json', '/docs', '/explorer']) {
      const res = await fetch(`${t.base}${path}`, { method: 'POST' });
      expect([path, (await problem(res, 405)).code, res.headers.get('allow')]).toEqual([
        path,
        'METHOD_NOT_ALLOWED',
        'GET, HEAD',
      ]);
    }
    // GraphQL too, with or without a media type (Apollo took a bare DELETE for a CSRF attempt).
    for (const [method, headers] of [
      ['DELETE', {}],
      ['PUT', { 'content-type': 'application/json' }],
      ['PATCH', { 'content-type': 'application/json' }],
    ] as const) {
      const res = await fetch(`${t.base}/graphql`, {
        method,
        headers: { 'X-SERVICE-KEY': TEST_KEY, ...headers },
        ...(method === 'DELETE' ? {} : { body: '{"query":"{ __typename }"}' }),
      });
      expect([method, (await problem(res, 405)).code, res.headers.get('allow')]).toEqual([
        method,
        'METHOD_NOT_ALLOWED',
        'GET, POST',
      ]);
    }
    // A path that exists under no method stays a 404.
    expect((await problem(await t.get('/v1/no-such-thing/'), 404)).code).toBe('NOT_FOUND');
  });

  it('refuses a GraphQL subscription with 400, not an internal error', async () => {
    const res = await t.post('/graphql', { query: 'subscription { company(vid: "boeing") { vid } }' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(body.errors[0]!.message).toMatch(/subscription/);
  });

  it('refuses a persisted query whose hash does not match with 400 BAD_REQUEST', async () => {
    const res = await t.post('/graphql', {
      query: '{ __typename }',
      extensions: { persistedQuery: { version: 1, sha256Hash: 'not-the-hash' } },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_REQUEST');
  });

  it('logged none of it as an error', () => {
    // The server logs into the recording (its start says where it listens): an empty one would hide
    // errors too. Its warnings were incidental (a point-read file left unwritten as the test graph was
    // seeded over it, or not), so the check no longer leans on them.
    expect(recorded.lines.some((l) => l.msg?.startsWith('tiergraph listening on'))).toBe(true);
    expect(recorded.lines.filter((l) => l.level >= ERROR_LEVEL)).toEqual([]);
  });
});

describe('GraphQL limits over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    // Tokens high enough that the cost rules, not the parser, have to refuse the aliased query below.
    t = await startTestServer({ GRAPHQL_MAX_TOKENS: '100000' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('refuses the 25-level fragment fan-out in under 100 ms while /healthz answers in under 50 ms', async () => {
    let query = 'query { company(vid: "boeing") { ...F0 } }\n';
    for (let i = 0; i < 25; i++) query += `fragment F${i} on Company { ...F${i + 1} ...F${i + 1} }\n`;
    query += 'fragment F25 on Company { name }';
    // Connections opened and code paths warmed, so that what is timed is the request itself.
    await fetch(`${t.base}/healthz`);
    await t.post('/graphql', { query: '{ __typename }' });

    // Three rounds, judged by their median: one stall of a busy machine is not the server's doing.
    const refusals: number[] = [];
    const slowestHealth: number[] = [];
    for (let round = 0; round < 3; round++) {
      const health: number[] = [];
      let done = false;
      const probe = (async () => {
        while (!done) {
          const started = performance.now();
          expect((await fetch(`${t.base}/healthz`)).status).toBe(200);
          health.push(performance.now() - started);
        }
      })();
      const started = performance.now();
      const res = await t.post('/graphql', { query });
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      refusals.push(performance.now() - started);
      done = true;
      await probe;
      expect(res.status).toBe(400);
      expect(body.errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(health.length).toBeGreaterThan(0);
      slowestHealth.push(Math.max(...health));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    expect(median(refusals)).toBeLessThan(100);
    expect(median(slowestHealth)).toBeLessThan(50);
  });

  it('refuses 2,300 aliased supplier lists in one query', async () => {
    const fields = Array.from({ length: 2300 }, (_, i) => `a${i}: suppliers(limit: 1) { has_more }`).join(
      ' ',
    );
    const res = await t.post('/graphql', { query: `{ company(vid: "boeing") { ${fields} } }` });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    // The cost refuses it (graphql-limits.test.ts); on a very busy machine the time budget may come first.
    expect(body.errors[0]!.message).toMatch(/cost|took more than/);
  });

  it('accepts the standard introspection query, so the explorer and tools can load the schema', async () => {
    const res = await t.post('/graphql', { query: getIntrospectionQuery({ inputValueDeprecation: true }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { __schema: { types: { name: string }[] } } };
    expect(body.data.__schema.types.map((x) => x.name)).toEqual(expect.arrayContaining(['Company', 'Job']));
  });

  it('stops parsing a document longer than GRAPHQL_MAX_TOKENS', async () => {
    const small = await startTestServer({ GRAPHQL_MAX_TOKENS: '200' }, null);
    try {
      const fields = Array.from({ length: 100 }, (_, i) => `a${i}: __typename`).join(' ');
      const res = await small.post('/graphql', { query: `{ ${fields} }` });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
      expect(body.errors[0]!.message).toMatch(/200 tokens/);
    } finally {
      await small.stop();
    }
  });
});

describe('failed authentication is rate-limited per client address', () => {
  let t: TestServer;
  beforeAll(async () => {
    // One trusted proxy hop: X-Forwarded-For stands for the client address, so one test can be several clients.
    t = await startTestServer({ AUTH_FAILURE_MAX: '3', AUTH_FAILURE_WINDOW_S: '60', TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const from = (address: string, key?: string) => ({
    'X-Forwarded-For': address,
    'X-SERVICE-KEY': key ?? TEST_KEY,
  });

  it('refuses requests without a valid key from an address after too many failures, and only from that address', async () => {
    const a = '203.0.113.7';
    expect((await t.get('/v1/edges/e1', from(a, 'wrong-key-wrong-key'))).status).toBe(403);
    expect((await t.get('/v1/edges/e1', from(a, 'wrong-key-3'))).status).toBe(403);
    expect((await t.post('/graphql', { query: '{ __typename }' }, from(a, 'wrong-key-2'))).status).toBe(403);

    const blocked = await t.get('/v1/edges/e1', from(a, 'wrong-key-wrong-key'));
    const p = await problem(blocked, 429);
    expect(p.code).toBe('RATE_LIMITED');
    expect(p.detail).toMatch(/failed authentications/);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    // The draft-8 headers every other 429 sends, for this policy.
    expect(blocked.headers.get('ratelimit-policy')).toBe('"3-failures-in-1min"; q=3; w=60');
    expect(blocked.headers.get('ratelimit')).toBe(`"3-failures-in-1min"; r=0; t=${retryAfter}`);
    // A valid key from the same address is served: others behind one NAT or proxy are not locked out.
    // Without a valid key, missing or unknown, it is still 429.
    expect((await t.get('/v1/edges/e1', from(a))).status).toBe(200);
    expect((await t.post('/graphql', { query: '{ __typename }' }, from(a))).status).toBe(200);
    await problem(await fetch(`${t.base}/v1/edges/e1`, { headers: { 'X-Forwarded-For': a } }), 429);
    await problem(await t.get('/v1/edges/e1', from(a, 'wrong-key-4')), 429);
    // Other addresses and the open routes are untouched.
    expect((await t.get('/v1/edges/e1', from('203.0.113.8'))).status).toBe(200);
    expect((await fetch(`${t.base}/healthz`, { headers: { 'X-Forwarded-For': a } })).status).toBe(200);
  });

  it('does not count requests without a key: a page elsewhere cannot lock its visitors out', async () => {
    const d = '192.0.2.44';
    for (let i = 0; i < 10; i++) {
      expect((await fetch(`${t.base}/v1/edges/e1`, { headers: { 'X-Forwarded-For': d } })).status).toBe(401);
      const preflight = await fetch(`${t.base}/v1/edges/e1`, {
        method: 'OPTIONS',
        headers: { 'X-Forwarded-For': d, Origin: 'https://elsewhere.example' },
      });
      expect(preflight.status).not.toBe(429);
    }
    expect((await t.get('/v1/edges/e1', from(d))).status).toBe(200);
  });

  it('does not count successful requests', async () => {
    const c = '198.51.100.4';
    for (let i = 0; i < 10; i++) expect((await t.get('/v1/edges/e1', from(c))).status).toBe(200);
    expect((await t.get('/v1/edges/e1', from(c, 'wrong-key-wrong-key'))).status).toBe(403);
    expect((await t.get('/v1/edges/e1', from(c))).status).toBe(200);
  });
});

describe('shutdown', () => {
  it('does not wait on a client that leaves a large response unread', async () => {
    const t = await startTestServer({ SHUTDOWN_GRACE_S: '1' }, null);
    // Sixteen megabytes that do not compress: more than the socket buffers hold, so each response stays in flight.
    const body = crypto.randomBytes(16 * 1024 * 1024);
    await t.running.blobs.put('shutdown/large.bin', Readable.from([body]), 'application/octet-stream');
    const link = await t.running.blobs.signedUrl('shutdown/large.bin', 60);
    const unread = await Promise.all([1, 2, 3].map(() => fetch(link)));
    expect(unread.every((r) => r.status === 200)).toBe(true);
    const started = performance.now();
    await t.stop();
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

import fs from 'node:fs';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

describe('rate limits', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers 429 with Retry-After and the IETF RateLimit headers once a key has used its window', async () => {
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 4; i++) {
      last = await t.get('/v1/edges/e1');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(last!.headers.get('ratelimit')).toMatch(/r=0/);
    expect(last!.headers.get('ratelimit-policy')).toMatch(/q=3/);
    const body = (await last!.json()) as { code: string; status: number };
    expect(body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    // Health checks are not limited.
    expect((await fetch(`${t.base}/healthz`)).status).toBe(200);
  });
});

describe('API keys', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('accepts a key created in the key file and refuses it once revoked', async () => {
    const { id, key } = t.running.keys.create('test');
    expect(key).not.toBe(TEST_KEY);
    expect((await t.get('/v1/edges/e1', { 'X-SERVICE-KEY': key })).status).toBe(200);
    expect(t.running.keys.revoke(id)).toBe(true);
    expect((await t.get('/v1/edges/e1', { 'X-SERVICE-KEY': key })).status).toBe(403);
  });

  it('keeps only hashes on disk', () => {
    const { key } = t.running.keys.create(null);
    expect(fs.readFileSync(t.running.keys.file, 'utf8')).not.toContain(key);
  });
});

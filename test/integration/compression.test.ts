import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

/** A search page whose JSON is between `min` and `max` bytes: above the middleware's own default threshold (1 KB), below ours. */
async function midSizedPath(t: TestServer, min: number, max: number): Promise<string> {
  for (let limit = 1; limit <= 50; limit++) {
    const path = `/v1/companies/?limit=${limit}`;
    const res = await t.get(path, { 'accept-encoding': 'identity' });
    const size = (await res.text()).length;
    if (size > min && size < max) return path;
  }
  throw new Error(`no search page of ${min} to ${max} bytes in the seed`);
}

describe('compression threshold (COMPRESS_MIN_BYTES)', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });
  const start = async (env: Record<string, string>) => {
    const t = await startTestServer(env);
    servers.push(t);
    return t;
  };

  it('sends answers under 4 KB uncompressed by default, and larger ones compressed', async () => {
    const t = await start({});
    const small = await t.get(await midSizedPath(t, 1200, 4000), { 'accept-encoding': 'gzip, br' });
    expect(small.status).toBe(200);
    expect(small.headers.get('content-encoding')).toBeNull();
    const large = await t.get('/openapi.json', { 'accept-encoding': 'gzip' });
    expect(large.headers.get('content-encoding')).toBe('gzip');
  });

  it('follows the setting both ways', async () => {
    const all = await start({ COMPRESS_MIN_BYTES: '0' });
    const small = await all.get(await midSizedPath(all, 1200, 4000), { 'accept-encoding': 'gzip' });
    expect(small.headers.get('content-encoding')).toBe('gzip');
    expect(((await small.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    const none = await start({ COMPRESS_MIN_BYTES: '100000000' });
    const large = await none.get('/openapi.json', { 'accept-encoding': 'gzip' });
    expect(large.headers.get('content-encoding')).toBeNull();
  });
});

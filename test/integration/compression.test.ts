import zlib from 'node:zlib';
import { TEST_KEY, startTestServer } from '../support/server';
import type { TestServer } from '../support/server';
import { rawRequest } from '../support/raw-http';

/** GET with the API key, the answer's bytes undecoded. */
const rawGet = (t: TestServer, path: string, headers: Record<string, string>) =>
  rawRequest(`${t.base}${path}`, { 'X-SERVICE-KEY': TEST_KEY, ...headers });

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

describe('answers sent whole are compressed in one piece', () => {
  let t: TestServer;
  let path: string;
  let plain: string;
  beforeAll(async () => {
    t = await startTestServer({ COMPRESS_MIN_BYTES: '1024' });
    path = await midSizedPath(t, 1200, 4000);
    plain = await (await t.get(path, { 'accept-encoding': 'identity' })).text();
  });
  afterAll(async () => {
    await t.stop();
  });

  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['*', 'br'],
  ])('to a client accepting %p: %s, with its length', async (accept, coding) => {
    const res = await rawGet(t, path, { 'accept-encoding': accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    // Sent with its length rather than in chunks.
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.length).toBeLessThan(Buffer.byteLength(plain));
    // Once, though both compressors may say so.
    expect(String(res.headers.vary).match(/accept-encoding/gi)).toHaveLength(1);
    const text = (
      coding === 'br' ? zlib.brotliDecompressSync(res.body) : zlib.gunzipSync(res.body)
    ).toString();
    expect(text).toBe(plain);
  });

  it('sends it as it is to a client that prefers that or accepts no compression', async () => {
    for (const accept of ['identity', 'gzip;q=0.2, identity', 'br;q=0, gzip;q=0']) {
      const res = await rawGet(t, path, { 'accept-encoding': accept });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body.toString()).toBe(plain);
    }
  });

  it('sends it as it is to a client that sends no Accept-Encoding, saying that it varies by one', async () => {
    const res = await rawGet(t, path, {});
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('Accept-Encoding');
    expect(res.body.toString()).toBe(plain);
  });

  it('leaves streamed answers to the stream compressor', async () => {
    const page = await (await t.get('/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const res = await rawGet(t, script!, { 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(zlib.gunzipSync(res.body).length).toBeGreaterThan(1024);
  });

  it('answers HEAD without a body, as before', async () => {
    const res = await rawRequest(
      `${t.base}${path}`,
      { 'X-SERVICE-KEY': TEST_KEY, 'accept-encoding': 'br' },
      'HEAD',
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});

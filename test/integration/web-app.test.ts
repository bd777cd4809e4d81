import { startTestServer } from '../support/server';
import { REQUIRED_APP_DIRECTIVES } from '../support/app-policy';
import type { TestServer } from '../support/server';
import { buildWebApp } from '../support/web-build';

let t: TestServer;
beforeAll(async () => {
  // The server reads the built pages when it starts.
  buildWebApp();
  t = await startTestServer({}, null);
});
afterAll(async () => {
  await t.stop();
});

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const open = (p: string, headers: Record<string, string> = {}) => fetch(`${t.base}${p}`, { headers });

describe('the web app routes', () => {
  it('serves the app at / and at its own addresses on reload, without a key', async () => {
    for (const p of ['/', '/companies/boeing', '/companies/boeing/map?tiers=2']) {
      const res = await open(p, html);
      expect([p, res.status, res.headers.get('content-type')]).toEqual([p, 200, 'text/html; charset=utf-8']);
      expect(await res.text()).toContain('tiergraph');
    }
  });

  it('leaves the server paths to the server', async () => {
    const v1 = await open('/v1/companies/boeing', html);
    expect(v1.status).toBe(401);
    expect(v1.headers.get('content-type')).toContain('application/problem+json');
    for (const p of ['/explorer', '/docs']) {
      expect(await (await open(p, html)).text()).not.toContain('id="main"');
    }
    expect((await open('/healthz', html)).headers.get('content-type')).toContain('application/json');
    expect((await open('/downloads/nothing', html)).headers.get('content-type')).not.toContain('text/html');
  });

  it('answers API clients on unknown paths with a problem document', async () => {
    const res = await open('/companies/boeing', { accept: 'application/json' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('pages of the app', () => {
  it('may not be framed by another site, sniffed or named in referrers', async () => {
    for (const path of ['/', '/companies/x', '/explorer', '/docs', '/openapi.json']) {
      const res = await fetch(`${t.base}${path}`);
      expect([path, res.status < 500]).toEqual([path, true]);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });

  it("run only this server's scripts on the app's pages; the explorer and the reference keep their own policy", async () => {
    for (const path of ['/', '/companies/x', '/companies/x/map?tiers=2']) {
      const policy = (await open(path, html)).headers.get('content-security-policy') ?? '';
      for (const directive of REQUIRED_APP_DIRECTIVES)
        expect([path, policy.split('; ')]).toEqual([path, expect.arrayContaining([directive])]);
      expect(policy).not.toContain('unsafe-');
    }
    for (const path of ['/explorer', '/docs', '/openapi.json'])
      expect([path, (await open(path, html)).headers.get('content-security-policy')]).toEqual([
        path,
        "frame-ancestors 'none'",
      ]);
  });
});

describe('the GraphQL explorer', () => {
  it('is the bundled GraphiQL page, told the key header, with every asset from this server', async () => {
    const res = await open('/explorer', html);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const page = await res.text();
    expect(page).toContain('<meta name="tiergraph-key-header" content="X-SERVICE-KEY" />');
    expect(page).not.toMatch(/https?:\/\//);
    const assets = [...page.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.filter((a) => /^\/assets\/explorer-[\w-]+\.js$/.test(a))).toHaveLength(1);
    expect(assets.filter((a) => /^\/assets\/explorer-[\w-]+\.css$/.test(a))).toHaveLength(1);
    for (const a of assets) {
      const asset = await open(a);
      const body = await asset.text();
      expect([a, asset.status]).toEqual([a, 200]);
      // Nothing the bundle loads at run time (fonts, workers, scripts) is fetched from elsewhere.
      expect([a, body.match(/url\(\s*["']?https?:/)]).toEqual([a, null]);
    }
  });
});

describe('compression', () => {
  it('compresses JSON and the app for clients that accept it', async () => {
    for (const encoding of ['gzip', 'br']) {
      const res = await open('/openapi.json', { 'accept-encoding': encoding });
      expect([encoding, res.headers.get('content-encoding')]).toEqual([encoding, encoding]);
      expect(((await res.json()) as { openapi: string }).openapi).toBe('3.1.0');
    }
    const plain = await open('/openapi.json', { 'accept-encoding': 'identity' });
    expect(plain.headers.get('content-encoding')).toBeNull();
  });
});

import { splitStatements } from '../../src/store/cypher-files';
import { rawRequest } from '../support/raw-http';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

describe('ETag and 304 on data reads', () => {
  // Before the data changes below: the search index rebuilt after it moves every tag on.
  it("answers another address's tag, and * where nothing is found, as if none were sent", async () => {
    const tag = (await t.get('/v1/companies/boeing/')).headers.get('etag')!;
    // Each answer has its own tag: another company, list or page is answered in full.
    const list = await t.get('/v1/companies/boeing/suppliers/', { 'if-none-match': tag });
    expect(list.status).toBe(200);
    const listTag = list.headers.get('etag');
    expect(listTag).toMatch(/^W\/".+"$/);
    expect(listTag).not.toBe(tag);
    expect((await t.get('/v1/companies/boeing/suppliers/', { 'if-none-match': listTag! })).status).toBe(304);
    expect(
      (await t.get('/v1/companies/boeing/suppliers/?limit=5', { 'if-none-match': listTag! })).status,
    ).toBe(200);
    expect((await t.get('/v1/companies/bolt/', { 'if-none-match': tag })).status).toBe(200);
    // A failure is a failure whatever tag comes with it.
    for (const inm of [tag, '*']) {
      expect((await t.get('/v1/companies/nobody/', { 'if-none-match': inm })).status).toBe(404);
      expect((await t.get('/v1/companies/boeing/suppliers/?limit=0', { 'if-none-match': inm })).status).toBe(
        400,
      );
      expect((await t.get('/v1/companies/boeing/no-such-list/', { 'if-none-match': inm })).status).toBe(404);
    }
    // `*` matches an answer there is.
    const any = await t.get('/v1/companies/boeing/', { 'if-none-match': '*' });
    expect([any.status, any.headers.get('etag'), await any.text()]).toEqual([304, tag, '']);
    // Links name the host the request was sent to (no public URL here): another host, another tag.
    const url = new URL(`${t.base}/v1/companies/boeing/suppliers/?limit=1`);
    const viaOther = await rawRequest(url.toString(), {
      'X-SERVICE-KEY': TEST_KEY,
      host: `other.example:${url.port}`,
    });
    const viaOwn = await rawRequest(url.toString(), { 'X-SERVICE-KEY': TEST_KEY });
    expect(viaOther.status).toBe(200);
    expect(viaOther.headers.etag).not.toBe(viaOwn.headers.etag);
  });

  it('answers 304 to the same tag until the data changes', async () => {
    const first = await t.get('/v1/companies/boeing/');
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^W\/".+"$/);
    const again = await t.get('/v1/companies/boeing/', { 'if-none-match': tag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    // Compared weakly: the same tag without W/, or among others, matches; another does not.
    const strong = tag!.slice(2);
    expect((await t.get('/v1/companies/boeing/', { 'if-none-match': strong })).status).toBe(304);
    expect((await t.get('/v1/companies/boeing/', { 'if-none-match': `"other", ${strong}` })).status).toBe(
      304,
    );
    expect((await t.get('/v1/companies/boeing/', { 'if-none-match': '"other"' })).status).toBe(200);

    await t.running.store.runScript(
      splitStatements("MATCH (c:Company {vid: 'lonely'}) SET c.name = 'Lonely Isle Trading'"),
    );
    const changed = await t.get('/v1/companies/boeing/', { 'if-none-match': tag! });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
  });

  it('tags neither failures nor job states', async () => {
    const missing = await t.get('/v1/companies/nobody/');
    expect([missing.status, missing.headers.get('etag')]).toEqual([404, null]);
    const refused = await t.get('/v1/companies/boeing/suppliers/?limit=many');
    expect([refused.status, refused.headers.get('etag')]).toEqual([400, null]);
    const noRoute = await t.get('/v1/companies/boeing/no-such-list/');
    expect([noRoute.status, noRoute.headers.get('etag')]).toEqual([404, null]);
    const job = await t.get('/v1/jobs/999999/');
    expect(job.headers.get('etag')).toBeNull();
  });
});

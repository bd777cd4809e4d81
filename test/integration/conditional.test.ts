import { splitStatements } from '../../src/store/cypher-files';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

describe('ETag and 304 on data reads', () => {
  it('answers 304 to the same tag until the data changes', async () => {
    const first = await t.get('/v1/companies/boeing/');
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^W\/".+"$/);
    const again = await t.get('/v1/companies/boeing/', { 'if-none-match': tag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await t.get('/v1/companies/boeing/suppliers/', { 'if-none-match': tag! })).status).toBe(304);
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

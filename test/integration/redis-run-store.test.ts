import type { TierViewRequest } from '../../src/domain/tierview';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisRunStore } from '../../src/jobs/engines/redis/redis.run-store';
import { req, runStoreContract } from '../support/run-store.contract';
import { REDIS_HINT, describeWithService, testRedisUrl } from '../support/services';

describeWithService('RedisRunStore', testRedisUrl(), REDIS_HINT, (url) => {
  // Every make() gets a key prefix of its own; afterAll deletes everything under them.
  const prefixes: string[] = [];
  const freshPrefix = (): string => {
    const prefix = `tiergraph-test:${randomBytes(6).toString('hex')}:`;
    prefixes.push(prefix);
    return prefix;
  };
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
    await admin.quit();
  });

  runStoreContract('redis', () => {
    const keyPrefix = freshPrefix();
    const open = () => Promise.resolve(new RedisRunStore({ url, keyPrefix }));
    return open().then((store) => ({ store, reopen: open }));
  });

  test('request JSON keeps empty arrays and large numbers through a transition', async () => {
    // The transition runs in Lua; a script that decoded and re-encoded the record
    // would turn [] into {} and round numbers to 14 digits.
    const store = new RedisRunStore({ client: admin, keyPrefix: freshPrefix() });
    await store.open();
    const request = {
      root_nodes: ['v1'],
      empty: [],
      big: 2 ** 52 + 1,
      ratio: 0.1 + 0.2,
      none: null,
      s: 'é"\\',
    };
    // The stores pass a request through as JSON, whatever its shape.
    const r = await store.create(request as unknown as TierViewRequest, new Date());
    const t = await store.transition(
      r.runId,
      ['PENDING'],
      { lifeCycleState: 'RUNNING', files: {} },
      new Date(),
    );
    expect(t?.request).toEqual(request);
    expect(t?.files).toEqual({});
    expect(await store.get(r.runId)).toEqual(t);
    await store.close();
  });

  test("keys stay under the prefix, and a caller's client stays open after close", async () => {
    const keyPrefix = freshPrefix();
    const store = new RedisRunStore({ client: admin, keyPrefix });
    await store.open();
    const r = await store.create(req(0), new Date());
    await store.transition(r.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, new Date());
    await store.close();
    expect(admin.status).toBe('ready');
    expect((await admin.keys(`${keyPrefix}*`)).sort()).toEqual(
      [
        `${keyPrefix}run:${r.runId}`,
        `${keyPrefix}seq`,
        `${keyPrefix}state:RUNNING`,
        `${keyPrefix}unowned`,
      ].sort(),
    );
    // The run left the PENDING set, which Redis then removed as empty.
    expect(await admin.zscore(`${keyPrefix}state:RUNNING`, String(r.runId))).toBe(String(r.runId));
  });

  test('an id stays used after its run is deleted: the counter does not go back', async () => {
    const keyPrefix = freshPrefix();
    const store = new RedisRunStore({ client: admin, keyPrefix });
    await store.open();
    await store.create(req(0), new Date());
    const b = await store.create(req(0), new Date());
    await admin.del(`${keyPrefix}run:${b.runId}`);
    const c = await store.create(req(0), new Date());
    expect(c.runId).toBeGreaterThan(b.runId);
    await store.close();
  });
});

import type { TierViewRequest } from '../../src/domain/tierview';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoRunStore } from '../../src/jobs/engines/mongodb/mongodb.run-store';
import { req, runStoreContract } from '../support/run-store.contract';
import { MONGO_HINT, describeWithService, testMongoUrl } from '../support/services';

describeWithService('MongoRunStore', testMongoUrl(), MONGO_HINT, (url) => {
  // Every make() gets a database of its own; afterAll drops them all.
  const dbNames: string[] = [];
  const freshDbName = (): string => {
    const name = `tiergraph_test_${randomBytes(6).toString('hex')}`;
    dbNames.push(name);
    return name;
  };
  let admin: MongoClient;
  beforeAll(async () => {
    admin = new MongoClient(url);
    await admin.connect();
  });
  afterAll(async () => {
    for (const name of dbNames) await admin.db(name).dropDatabase();
    await admin.close();
  });

  runStoreContract('mongodb', () => {
    const dbName = freshDbName();
    const open = () => Promise.resolve(new MongoRunStore({ url, dbName }));
    return open().then((store) => ({ store, reopen: open }));
  });

  test("a create lock left by a crashed process lapses; the owner's creates go on", async () => {
    const db = admin.db(freshDbName());
    const store = new MongoRunStore({ db });
    await store.open();
    const locks = db.collection<{ _id: string; token: string; expiresAt: Date }>('tiergraph_counters');
    await locks.insertOne({ _id: 'quota-lock:key-x', token: 'dead', expiresAt: new Date(Date.now() - 1000) });
    const r = await store.create(req(0), new Date(), { ownerKeyId: 'key-x', maxActive: 2 });
    expect(r.ownerKeyId).toBe('key-x');
    // The lock is released after the create.
    expect(await locks.countDocuments({ _id: 'quota-lock:key-x' })).toBe(0);
    await store.close();
  });

  test('an id stays used after its run is deleted: the counter does not go back', async () => {
    const db = admin.db(freshDbName());
    const store = new MongoRunStore({ db });
    await store.open();
    await store.create(req(0), new Date());
    const b = await store.create(req(0), new Date());
    await db.collection<{ _id: number }>('tiergraph_runs').deleteOne({ _id: b.runId });
    const c = await store.create(req(0), new Date());
    expect(c.runId).toBeGreaterThan(b.runId);
    await store.close();
  });

  test('request JSON keeps arrays and numbers through a transition; open is idempotent', async () => {
    const db = admin.db(freshDbName());
    const store = new MongoRunStore({ db });
    await Promise.all([store.open(), store.open()]);
    const request = { root_nodes: ['v1'], empty: [], big: 2 ** 52 + 1, none: null };
    // The stores pass a request through as JSON, whatever its shape.
    const r = await store.create(request as unknown as TierViewRequest, new Date());
    const t = await store.transition(r.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, new Date());
    expect(t?.request).toEqual(request);
    expect(await store.get(r.runId)).toEqual(t);
    await store.close();
  });
});

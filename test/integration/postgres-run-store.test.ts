import type { TierViewRequest } from '../../src/domain/tierview';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { PostgresRunStore } from '../../src/jobs/engines/postgres/postgres.run-store';
import { req, runStoreContract } from '../support/run-store.contract';
import { POSTGRES_HINT, describeWithService, testPostgresUrl } from '../support/services';

describeWithService('PostgresRunStore', testPostgresUrl(), POSTGRES_HINT, (url) => {
  // Every make() gets a table of its own, so tests (and parallel jest workers) never
  // see each other's runs; all of them are dropped at the end.
  const tables: string[] = [];
  const freshTable = (): string => {
    const name = `runs_test_${randomBytes(6).toString('hex')}`;
    tables.push(name);
    return name;
  };
  let admin: Pool;
  beforeAll(() => {
    admin = new Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    for (const t of tables) await admin.query(`DROP TABLE IF EXISTS "${t}"`);
    await admin.end();
  });

  runStoreContract('postgres', () => {
    const tableName = freshTable();
    const open = () => Promise.resolve(new PostgresRunStore({ connectionString: url, tableName }));
    return open().then((store) => ({ store, reopen: open }));
  });

  test('an id stays used after its run is deleted: the identity column does not go back', async () => {
    const tableName = freshTable();
    const store = new PostgresRunStore({ pool: admin, tableName });
    await store.open();
    const a = await store.create(req(0), new Date());
    const b = await store.create(req(0), new Date());
    await admin.query(`DELETE FROM "${tableName}" WHERE run_id = $1`, [b.runId]);
    const c = await store.create(req(0), new Date());
    expect(c.runId).toBeGreaterThan(b.runId);
    expect(await store.get(b.runId)).toBeNull();
    expect((await store.get(a.runId))?.runId).toBe(a.runId);
    await store.close();
  });

  test("a caller's pool stays open after close, and open is idempotent also when concurrent", async () => {
    const tableName = freshTable();
    const stores = [0, 1, 2].map(() => new PostgresRunStore({ pool: admin, tableName }));
    await Promise.all(stores.map((s) => s.open()));
    await stores[0]!.open();
    for (const s of stores) await s.close();
    const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${tableName}"`);
    expect(rows[0]!.n).toBe(0);
  });

  test('request JSON keeps arrays, nesting and numbers through a transition', async () => {
    const store = new PostgresRunStore({ pool: admin, tableName: freshTable() });
    await store.open();
    const request = { root_nodes: ['v1', 'v2'], empty: [], nested: { a: [1.5, 2 ** 40] }, none: null };
    // The stores pass a request through as JSON, whatever its shape.
    const r = await store.create(request as unknown as TierViewRequest, new Date());
    const t = await store.transition(r.runId, ['PENDING'], { files: { a: 'b' } }, new Date());
    expect(t?.request).toEqual(request);
    expect(t?.files).toEqual({ a: 'b' });
    await store.close();
  });

  test('rejects a table name that is not a plain identifier', () => {
    expect(() => new PostgresRunStore({ pool: admin, tableName: 'runs"; DROP TABLE x; --' })).toThrow(
      /invalid run table name/,
    );
  });
});

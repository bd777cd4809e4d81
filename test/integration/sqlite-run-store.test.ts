import fs from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { openSqliteFile } from '../../src/jobs/engines/sqlite/sqlite.connection';
import { SqliteRunStore } from '../../src/jobs/engines/sqlite/sqlite.run-store';
import { tempDir } from '../support/paths';
import { req, runStoreContract } from '../support/run-store.contract';

const dir = tempDir('sqlite-run-store');
const connections: Database[] = [];
let files = 0;
const freshFile = (): string => path.join(dir, `runs-${++files}.sqlite`);

afterAll(() => {
  for (const db of connections.splice(0)) db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// The store opens and closes the file itself; a reopen is a second connection, as another process would have.
runStoreContract('sqlite, own file', () => {
  const file = freshFile();
  return Promise.resolve({
    store: new SqliteRunStore({ path: file }),
    reopen: () => Promise.resolve(new SqliteRunStore({ path: file })),
  });
});

// The application's layout: one connection, shared with the Agenda backend, that the stores never close.
runStoreContract('sqlite, shared connection', () => {
  const db = openSqliteFile(freshFile());
  connections.push(db);
  return Promise.resolve({
    store: new SqliteRunStore({ db, tableName: 'export_runs' }),
    reopen: () => Promise.resolve(new SqliteRunStore({ db, tableName: 'export_runs' })),
  });
});

describe('SqliteRunStore', () => {
  test('ids stay unused after the newest run is deleted and the file is reopened', async () => {
    const file = freshFile();
    const store = new SqliteRunStore({ path: file });
    await store.open();
    const last = await store.create(req(1), new Date());
    await store.close();
    const db = openSqliteFile(file);
    connections.push(db);
    db.prepare('DELETE FROM runs WHERE run_id = ?').run(last.runId);
    const again = new SqliteRunStore({ db });
    await again.open();
    expect((await again.create(req(2), new Date())).runId).toBeGreaterThan(last.runId);
  });

  test('closing a store leaves a shared connection open', async () => {
    const db = openSqliteFile(freshFile());
    connections.push(db);
    const store = new SqliteRunStore({ db });
    await store.open();
    await store.close();
    expect(db.open).toBe(true);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  test('a transition on another connection sees the state the first one wrote', async () => {
    const file = freshFile();
    const a = new SqliteRunStore({ path: file });
    const b = new SqliteRunStore({ path: file });
    await a.open();
    await b.open();
    try {
      const run = await a.create(req(0), new Date());
      expect(
        await a.transition(run.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, new Date()),
      ).not.toBeNull();
      expect(
        await b.transition(run.runId, ['PENDING'], { lifeCycleState: 'RUNNING' }, new Date()),
      ).toBeNull();
      expect(await b.countInState('RUNNING')).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('rejects a table name that is not a plain identifier', () => {
    expect(() => new SqliteRunStore({ path: freshFile(), tableName: 'runs"; DROP TABLE x; --' })).toThrow(
      /invalid SQLite table name/,
    );
  });
});

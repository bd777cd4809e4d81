import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  ConnectionPool,
  NO_MATCH_STRING,
  QueryParameterError,
  normalizeParams,
} from '../../src/store/embedded/connection-pool';
import { openDatabase } from '../../src/store/embedded/engine';
import type { EngineDatabase } from '../../src/store/embedded/engine';
import { parseHeader } from '../../src/store/cypher-files';
import type { CypherQuery } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { ROOT, tempDir } from '../support/paths';

const query = (name: string, text: string): CypherQuery => ({
  name,
  text,
  params: parseHeader(text),
  file: name,
  literals: new Map(),
});

/** Runs test/support/`file` in a node process of its own, loading the TypeScript sources, with `dir`. */
function runChild(file: string, dir: string) {
  return spawnSync(
    process.execPath,
    ['-r', path.join(ROOT, 'test/support/ts-register.js'), path.join(ROOT, 'test/support', file), dir],
    { encoding: 'utf8', timeout: 60_000 },
  );
}

describe('embedded engine guards', () => {
  let dir: string;
  let db: EngineDatabase;
  let pool: ConnectionPool;

  beforeAll(async () => {
    dir = tempDir('guards');
    db = openDatabase(path.join(dir, 'g.kuzu'), { bufferPoolBytes: 128 * 1024 * 1024 });
    await db.init();
    pool = await ConnectionPool.open(db, 2, { queryTimeoutMs: 10_000 });
    await pool.run('CREATE NODE TABLE T(id STRING, n INT64, PRIMARY KEY(id))');
    await pool.run("CREATE (:T {id: 'a', n: 1}), (:T {id: 'b', n: 2})");
  });
  afterAll(async () => {
    await pool.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('never binds an empty list: IN [] becomes a list that matches nothing', async () => {
    const q = query('t/in', '// $ids: STRING[]\nMATCH (t:T) WHERE t.id IN $ids RETURN t.id AS id');
    expect(normalizeParams(q, { ids: [] })).toEqual({ ids: [NO_MATCH_STRING] });
    await expect(pool.query(q, { ids: [] })).resolves.toEqual([]);
    await expect(pool.query(q, { ids: ['b'] })).resolves.toEqual([{ id: 'b' }]);
  });

  it('gives every UNWIND map the same keys, and skips an empty UNWIND', async () => {
    const q = query('t/unwind', '// $rows: MAP[]\nUNWIND $rows AS r RETURN r.id AS id, r.n AS n');
    expect(normalizeParams(q, { rows: [{ id: 'x' }, { n: 2 }] })).toEqual({
      rows: [
        { id: 'x', n: null },
        { id: null, n: 2 },
      ],
    });
    await expect(pool.query(q, { rows: [{ id: 'x', n: 1 }, { id: 'y' }] })).resolves.toEqual([
      { id: 'x', n: 1 },
      { id: 'y', n: null },
    ]);
    expect(normalizeParams(q, { rows: [] })).toBeNull();
    await expect(pool.query(q, { rows: [] })).resolves.toEqual([]);
  });

  it('refuses missing, undeclared and mistyped parameters before they reach the engine', () => {
    const q = query(
      't/typed',
      '// $id: STRING\n// $n: INT64\nMATCH (t:T {id: $id}) WHERE t.n >= $n RETURN t.id',
    );
    expect(() => normalizeParams(q, { id: 'a' })).toThrow(QueryParameterError);
    expect(() => normalizeParams(q, { id: 'a', n: 1, extra: 2 })).toThrow(/undeclared/);
    expect(() => normalizeParams(q, { id: 'a', n: 1.5 })).toThrow(/integer/);
    expect(() => normalizeParams(q, { id: 5, n: 1 })).toThrow(/string/);
  });

  it('hands out only initialised connections, queueing callers beyond the pool size', async () => {
    const q = query('t/one', '// $id: STRING\nMATCH (t:T {id: $id}) RETURN t.n AS n');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.query(q, { id: i % 2 ? 'a' : 'b' })),
    );
    expect(results.map((r) => r[0]!.n)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? 1 : 2)));
  });

  it('keeps working after a query fails (its results are closed)', async () => {
    await expect(pool.run('MATCH (x:Missing) RETURN x')).rejects.toThrow();
    await expect(pool.run('MATCH (t:T) RETURN count(t) AS c')).resolves.toEqual([{ c: 2 }]);
  });

  it('gives one statement a time limit of its own, and its connection the pool limit again after', async () => {
    // An export of every edge runs longer than the reads' limit; the limit holds for what follows.
    const strict = await ConnectionPool.open(db, 1, { queryTimeoutMs: 1 });
    const slow = 'UNWIND range(1, 400000) AS x RETURN sum(x) AS s';
    try {
      await expect(strict.run(slow)).rejects.toThrow(/Interrupted/);
      await expect(strict.run(slow, { timeoutMs: 600_000 })).resolves.toEqual([{ s: 80000200000n }]);
      await expect(strict.run(slow)).rejects.toThrow(/Interrupted/);
    } finally {
      await strict.close();
    }
  });

  it('reads pages at offsets the engine would crash the process on', () => {
    // In a process of its own: before the guard, this ended with SIGSEGV at offset 7,086.
    const childDir = tempDir('skip');
    const r = runChild('skip-page.child.ts', childDir);
    fs.rmSync(childDir, { recursive: true, force: true });
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(JSON.parse(r.stdout)).toEqual({
      0: [{ id: 'a' }],
      1: [{ id: 'b' }],
      2: [{ id: 'c' }],
      7086: [],
      100000: [],
    });
  });

  it('lets a process that used the store exit cleanly', () => {
    const childDir = tempDir('exit');
    const r = runChild('exit-cleanly.child.ts', childDir);
    fs.rmSync(childDir, { recursive: true, force: true });
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({
      status: 0,
      signal: null,
      stdout: 'closed',
    });
  });

  it('says so plainly when another process holds the store', async () => {
    const storeDir = tempDir('in-use');
    const openInChild = () => runChild('open-store.child.ts', storeDir);
    const holder = new EmbeddedGraphStore({
      dir: path.join(storeDir, 'graph'),
      connections: 1,
      bufferPoolMb: 64,
    });
    await holder.open();
    try {
      const r = openInChild();
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(
        `the embedded store in ${path.join(storeDir, 'graph')} is in use by another process (a server on the same DATA_DIR?): stop that process, or give this one another DATA_DIR`,
      );
    } finally {
      await holder.close();
    }
    // Once it is let go, another process opens it.
    expect(openInChild().stdout).toBe('opened');
    fs.rmSync(storeDir, { recursive: true, force: true });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import {
  cypherRoot,
  listQueryNames,
  loadQuery,
  parseHeader,
  splitStatements,
} from '../../src/store/cypher-files';
import { bindLiterals } from '../../src/store/cypher-files';
import type { CypherQuery, ParamType } from '../../src/store/cypher-files';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { openDatabase } from '../../src/store/embedded/engine';
import type { EngineDatabase } from '../../src/store/embedded/engine';
import { LOAD_ORDER, TABLES } from '../../src/store/tables';
import type { ColumnType } from '../../src/store/tables';
import { usedParams } from '../support/cypher-text';
import { tempDir } from '../support/paths';

const ddl = fs.readFileSync(path.join(cypherRoot(), 'schema', 'create.embedded.cypher'), 'utf8');

/** Columns of one CREATE ... TABLE statement of the embedded schema. */
function ddlColumns(table: string): [string, string][] {
  const statement = splitStatements(ddl).find((s) => new RegExp(`TABLE IF NOT EXISTS ${table}\\(`).test(s));
  if (!statement) throw new Error(`no DDL for ${table}`);
  const body = statement.slice(statement.indexOf('(') + 1, statement.lastIndexOf(')'));
  return body
    .split(',')
    .map((c) => c.trim())
    .filter((c) => !/^(PRIMARY KEY|FROM )/.test(c))
    .map((c) => c.split(/\s+/) as [string, string]);
}

// The embedded schema keeps JSON documents and list literals as text.
/** A value of each declared type, enough for the engine to bind and run the query. */
function sampleParams(q: CypherQuery): Record<string, unknown> {
  const byType: Record<ParamType, unknown> = {
    STRING: 'x',
    'STRING[]': ['x'],
    INT64: 1,
    DOUBLE: 0.5,
    BOOLEAN: true,
    TIMESTAMP: new Date(0),
    'MAP[]': [{ a: 1 }],
  };
  return Object.fromEntries([...q.params].map(([name, type]) => [name, byType[type]]));
}

/** The query with a sample value in each literal slot (and a check that the body uses exactly the declared slots). */
function bound(q: CypherQuery): CypherQuery {
  const body = q.text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n');
  const slots = new Set([...body.matchAll(/\{\{([a-z_]+)\}\}/g)].map((m) => m[1]!));
  expect([...slots].sort()).toEqual([...q.literals.keys()].sort());
  if (q.literals.size === 0) return q;
  const sample = { INT: 2, DATE: '2020-01-01', BOOLEAN: false } as const;
  return bindLiterals(q, Object.fromEntries([...q.literals].map(([n, t]) => [n, sample[t]])));
}

const engineType = (t: ColumnType) => (t === 'JSON' || t === 'STRING[]' || t === 'TEXT[]' ? 'STRING' : t);

describe('schema and staging contract', () => {
  it.each(LOAD_ORDER.map((t) => [t]))('%s has the same columns, in the same order, in both', (table) => {
    expect(ddlColumns(table)).toEqual(TABLES[table].columns.map(([n, t]) => [n, engineType(t)]));
  });

  it('loads every table of the contract', () => {
    expect([...LOAD_ORDER].sort()).toEqual(Object.keys(TABLES).sort());
  });
});

describe('Cypher query files', () => {
  let dir: string;
  let db: EngineDatabase;
  let pool: ConnectionPool;
  beforeAll(async () => {
    dir = tempDir('cypher');
    db = openDatabase(path.join(dir, 'g.kuzu'), { bufferPoolBytes: 64 * 1024 * 1024 });
    await db.init();
    pool = await ConnectionPool.open(db, 1, { queryTimeoutMs: 10_000 });
    for (const s of splitStatements(ddl)) await pool.run(s);
  });
  afterAll(async () => {
    await pool.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const names = listQueryNames();
  const variants = fs
    .readdirSync(cypherRoot(), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.embedded.cypher') && !f.startsWith('schema'))
    .map((f) =>
      f
        .replace(/\.embedded\.cypher$/, '')
        .split(path.sep)
        .join('/'),
    );

  it.each(variants.map((v) => [v]))(
    'embedded variant %s keeps its base parameters and compiles',
    async (name) => {
      const q = loadQuery(name, 'embedded');
      expect(q.file.endsWith('.embedded.cypher')).toBe(true);
      if (names.includes(name)) {
        expect([...q.params.keys()].sort()).toEqual(
          [...parseHeader(fs.readFileSync(path.join(cypherRoot(), `${name}.cypher`), 'utf8')).keys()].sort(),
        );
      }
      await expect(pool.query(bound(q), sampleParams(q))).resolves.toEqual(expect.any(Array));
    },
  );

  it('finds the queries', () => {
    expect(names.length).toBeGreaterThanOrEqual(10);
  });

  it.each(names.map((n) => [n]))('%s declares exactly the parameters it uses and compiles', async (name) => {
    const q = loadQuery(name, 'embedded');
    expect(usedParams(q)).toEqual([...q.params.keys()].sort());
    await expect(pool.query(bound(q), sampleParams(q))).resolves.toEqual(expect.any(Array));
  });
});

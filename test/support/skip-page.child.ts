// Reads pages at growing offsets through the connection pool, on a table of two
// rows, and prints them as JSON: the engine once ended the process on a large SKIP.
import path from 'node:path';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { openDatabase } from '../../src/store/embedded/engine';
import { parseHeader } from '../../src/store/cypher-files';

async function main(): Promise<void> {
  const db = openDatabase(path.join(process.argv[2]!, 'g.kuzu'), { bufferPoolBytes: 64 * 1024 * 1024 });
  await db.init();
  const pool = await ConnectionPool.open(db, 1, { queryTimeoutMs: 10_000 });
  await pool.run('CREATE NODE TABLE T(id STRING, PRIMARY KEY(id))');
  await pool.run("CREATE (:T {id: 'a'}), (:T {id: 'b'}), (:T {id: 'c'})");
  const text =
    '// $skip: INT64\n// $limit: INT64\nMATCH (t:T) RETURN t.id AS id ORDER BY id SKIP $skip LIMIT $limit';
  const q = { name: 't/page', text, params: parseHeader(text), file: 't/page', literals: new Map() };
  const pages: Record<number, unknown> = {};
  for (const skip of [0, 1, 2, 7086, 100_000]) pages[skip] = await pool.query(q, { skip, limit: 1 });
  await pool.close();
  await db.close();
  process.stdout.write(JSON.stringify(pages));
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});

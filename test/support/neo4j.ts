import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import type { Neo4jStoreOptions } from '../../src/store/neo4j/neo4j.store';

export const NEO4J_HINT =
  'no Neo4j: run `source .ci/services.sh` (starts Neo4j 5.26 on 127.0.0.1:7687), or set NEO4J_URI (with NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE) to an empty Neo4j 5 database, or run where a Docker engine answers (testcontainers)';

const inCi = (): boolean => process.env.CI === 'true' || process.env.CI === '1';

export interface Neo4jTarget {
  uri: string;
  user: string;
  password: string;
  database: string;
  stop: () => Promise<void>;
}

/**
 * Where the Neo4j suites can run: 'uri' (NEO4J_URI), 'docker' (testcontainers), or
 * null. Under CI=true, where .ci/services.sh starts a server, null is an error.
 */
export function neo4jAvailability(): 'uri' | 'docker' | null {
  if (process.env.NEO4J_URI) return 'uri';
  if (dockerAnswers()) return 'docker';
  if (inCi()) throw new Error(`Neo4j is required under CI=true: ${NEO4J_HINT}`);
  return null;
}

/** Whether a Docker engine answers its ping (a docker client alone, as on these machines, is not enough). */
function dockerAnswers(): boolean {
  const host = process.env.DOCKER_HOST;
  const socketPath = host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock';
  if (host && !host.startsWith('unix://')) return true;
  if (!fs.existsSync(socketPath)) return false;
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `require('http').get({ socketPath: ${JSON.stringify(socketPath)}, path: '/_ping' }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))`,
    ],
    { timeout: 5000 },
  );
  return probe.status === 0;
}

/** Starts (testcontainers) or names (NEO4J_URI) the Neo4j server of the tests. */
export async function startNeo4j(): Promise<Neo4jTarget> {
  if (process.env.NEO4J_URI) {
    const database = process.env.NEO4J_DATABASE ?? 'neo4j';
    // Community edition has one user database, and every suite empties it: the test
    // files that share a server take turns, whichever jest worker runs them.
    const release = await lockDatabase(`${process.env.NEO4J_URI} ${database}`);
    return {
      uri: process.env.NEO4J_URI,
      user: process.env.NEO4J_USER ?? 'neo4j',
      password: process.env.NEO4J_PASSWORD ?? '',
      database,
      stop: () => Promise.resolve(release()),
    };
  }
  // Loaded only here, so that machines without Docker never load testcontainers.
  const { Neo4jContainer } = await import('@testcontainers/neo4j');
  const container = await new Neo4jContainer('neo4j:5-community').withPassword('tiergraph-test').start();
  return {
    uri: container.getBoltUri(),
    user: container.getUsername(),
    password: container.getPassword(),
    database: 'neo4j',
    stop: async () => {
      await container.stop();
    },
  };
}

/**
 * Label of the node that marks a database as the tests' own. A database is emptied
 * only when it is empty already or carries this mark, so a NEO4J_URI pointed at a
 * real database (which never has it) is refused instead of wiped.
 */
export const TEST_MARK_LABEL = 'TiergraphTestDatabase';

/** Empties the test database (all but its mark), refusing one that holds data no test wrote. */
export async function emptyNeo4j(t: Neo4jTarget): Promise<void> {
  const driver = neo4j.driver(t.uri, neo4j.auth.basic(t.user, t.password));
  const session = driver.session({ database: t.database });
  try {
    const res = await session.run(
      `OPTIONAL MATCH (m:${TEST_MARK_LABEL}) WITH count(m) AS marks
       OPTIONAL MATCH (n) WHERE NOT n:${TEST_MARK_LABEL}
       RETURN marks, count(n) AS nodes`,
    );
    const marks = Number(res.records[0]?.get('marks') ?? 0);
    const nodes = Number(res.records[0]?.get('nodes') ?? 0);
    if (marks === 0 && nodes > 0)
      throw new Error(
        `the Neo4j database ${t.database} at ${t.uri} holds ${nodes} nodes and no :${TEST_MARK_LABEL} node, ` +
          'so it is not a test database; point NEO4J_URI at an empty one (`source .ci/services.sh` starts one)',
      );
    await session.run(`MERGE (:${TEST_MARK_LABEL} {marked: true})`);
    await session.run(
      `MATCH (n) WHERE NOT n:${TEST_MARK_LABEL} CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS`,
    );
    // Indexes and constraints stay: every suite migrates to the same schema.
  } finally {
    await session.close();
    await driver.close();
  }
}

/** How long a suite waits for another test file to finish with the shared database. */
const LOCK_WAIT_MS = 170_000;

/**
 * A lock across jest workers for one database, held as a directory in the system's
 * temporary directory with the holder's pid; a holder that died leaves a lock that
 * the next taker removes. Resolves to the function that releases it.
 */
async function lockDatabase(key: string): Promise<() => void> {
  const hash = crypto.createHash('sha256').update(key).digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), `tiergraph-neo4j-test-${hash}.lock`);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (holderIsGone(dir)) {
        fs.rmSync(dir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`waited ${LOCK_WAIT_MS / 1000} s for the Neo4j test database (lock ${dir})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', release);
  return release;
}

function holderIsGone(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  } catch {
    // Taken a moment ago and its pid not yet written, unless the taker died in between.
    try {
      return Date.now() - fs.statSync(dir).mtimeMs > 10_000;
    } catch {
      return true;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** An opened, migrated adapter on the test server. */
export async function openNeo4jStore(
  t: Neo4jTarget,
  options: Partial<
    Pick<
      Neo4jStoreOptions,
      'derivedDir' | 'walkMemory' | 'pointFile' | 'pointFileAtImport' | 'importBatchSize' | 'logger'
    >
  > = {},
): Promise<Neo4jGraphStore> {
  const store = new Neo4jGraphStore({
    ...options,
    importBatchSize: options.importBatchSize ?? 2,
    uri: t.uri,
    user: t.user,
    password: t.password,
    database: t.database,
    maxPoolSize: 10,
    acquireTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    queryTimeoutMs: 30_000,
    importParallel: 3,
    generationPollMs: 60_000,
    migrateOnOpen: true,
  });
  await store.open();
  return store;
}

/**
 * Every node and relationship of the database with its labels or type and
 * properties, in a stable order (the graph's bookkeeping nodes apart).
 * `comparable`: without what only tells how the data was written, so that a
 * bulk-loaded graph compares with an imported one: import ids, and lists with
 * no elements (which the bulk loader cannot write; readers take both as none).
 */
/** A value's type as the dump shows it: a date and its text must not compare equal. */
function typeOf(v: unknown): string {
  if (Array.isArray(v)) return `list of ${v.map(typeOf).join(',')}`;
  if (v !== null && typeof v === 'object') return v.constructor.name;
  return typeof v;
}

export async function dumpNeo4j(t: Neo4jTarget, comparable = false): Promise<string[]> {
  const driver = neo4j.driver(t.uri, neo4j.auth.basic(t.user, t.password), { disableLosslessIntegers: true });
  const session = driver.session({ database: t.database });
  const props = (p: Record<string, unknown>): [string, string][] =>
    Object.keys(p)
      .filter((k) => !comparable || (k !== 'import_id' && !(Array.isArray(p[k]) && p[k].length === 0)))
      .sort()
      .map((k) => [k, `${typeOf(p[k])} ${String(p[k])}`]);
  try {
    const nodes = await session.run(
      `MATCH (n) WHERE NOT n:TiergraphMeta AND NOT n:${TEST_MARK_LABEL} RETURN labels(n) AS l, properties(n) AS p`,
    );
    const rels = await session.run(
      'MATCH (a)-[r]->(b) RETURN type(r) AS t, properties(r) AS p, elementId(a) = elementId(b) AS loop',
    );
    return [
      ...nodes.records.map((r) => JSON.stringify([r.get('l'), props(r.get('p') as Record<string, unknown>)])),
      ...rels.records.map((r) =>
        JSON.stringify([r.get('t'), props(r.get('p') as Record<string, unknown>), r.get('loop')]),
      ),
    ].sort();
  } finally {
    await session.close();
    await driver.close();
  }
}

export const NEO4J_LAUNCHER_HINT =
  'no Neo4j launcher: run `source .ci/services.sh`, which builds it (.ci/neo4j) with Maven and sets TEST_NEO4J_LAUNCHER to its build directory';

/**
 * The build directory of the Neo4j launcher of .ci/neo4j (its jar, and its class
 * path, which holds neo4j-admin's importer), or null. Under CI=true, where
 * .ci/services.sh builds it, null is an error.
 */
export function neo4jLauncher(): string | null {
  const dir = process.env.TEST_NEO4J_LAUNCHER;
  if (dir && fs.existsSync(path.join(dir, 'classpath.txt'))) return dir;
  if (inCi()) throw new Error(`the Neo4j launcher is required under CI=true: ${NEO4J_LAUNCHER_HINT}`);
  return null;
}

function launcherClassPath(launcher: string, withServer: boolean): string {
  const deps = fs.readFileSync(path.join(launcher, 'classpath.txt'), 'utf8').trim();
  return withServer ? `${path.join(launcher, 'neo4j-test-server-1.jar')}${path.delimiter}${deps}` : deps;
}

/**
 * Runs `neo4j-admin database import full neo4j @import.args` from inside
 * `filesDir`, as the README tells users to, into the new NEO4J_HOME `home`.
 */
export function neo4jAdminImport(
  launcher: string,
  filesDir: string,
  home: string,
): { status: number | null; output: string } {
  fs.mkdirSync(path.join(home, 'conf'), { recursive: true });
  fs.writeFileSync(path.join(home, 'conf', 'neo4j.conf'), '');
  const r = spawnSync(
    'java',
    [
      '-Xmx512m',
      '-cp',
      launcherClassPath(launcher, false),
      'org.neo4j.cli.AdminTool',
      'database',
      'import',
      'full',
      'neo4j',
      '@import.args',
    ],
    {
      cwd: filesDir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, NEO4J_HOME: home, NEO4J_CONF: path.join(home, 'conf') },
    },
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** A loopback port nothing listens on at the moment of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The password the launcher gives user neo4j on the servers of {@link serveNeo4jData}. */
const BULK_PASSWORD = 'tiergraph-bulk';

/** A Neo4j server of its own (the launcher, on `port` or a free one) serving the data directory `data`, auth on. */
export async function serveNeo4jData(
  launcher: string,
  data: string,
  work: string,
  port?: number,
): Promise<Neo4jTarget> {
  port ??= await freePort();
  fs.mkdirSync(work, { recursive: true });
  const child = spawn(
    'java',
    [
      '-Xmx512m',
      // The harness leaves a logging configuration in the temporary directory at every start: in
      // the system's, one file a test run; in `work`, nothing outlives the test's own directory.
      `-Djava.io.tmpdir=${work}`,
      '--add-opens=java.base/java.nio=ALL-UNNAMED',
      '--add-opens=java.base/java.io=ALL-UNNAMED',
      '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
      '-Dio.netty.tryReflectionSetAccessible=true',
      '-cp',
      launcherClassPath(launcher, true),
      'tiergraph.ci.Neo4jTestServer',
      work,
      String(port),
      data,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NEO4J_PASSWORD: BULK_PASSWORD } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Neo4j on ${data} did not start in 120 s:\n${output}`)),
      120_000,
    );
    const hear = (d: Buffer) => {
      output += d.toString();
      if (output.includes('neo4j: ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', hear);
    child.stderr.on('data', hear);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Neo4j on ${data} exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    uri: `bolt://127.0.0.1:${port}`,
    user: 'neo4j',
    password: BULK_PASSWORD,
    database: 'neo4j',
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

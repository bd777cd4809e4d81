import { spawnSync } from 'node:child_process';
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
  options: Pick<Neo4jStoreOptions, 'derivedDir' | 'walkMemory' | 'pointFile'> = {},
): Promise<Neo4jGraphStore> {
  const store = new Neo4jGraphStore({
    ...options,
    uri: t.uri,
    user: t.user,
    password: t.password,
    database: t.database,
    maxPoolSize: 10,
    acquireTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    queryTimeoutMs: 30_000,
    importBatchSize: 2,
    generationPollMs: 60_000,
    migrateOnOpen: true,
  });
  await store.open();
  return store;
}

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import neo4j from 'neo4j-driver';
import { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';

export const NEO4J_HINT =
  'set NEO4J_URI (with NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE) to an empty Neo4j 5 database, or run where a Docker engine answers (testcontainers)';

export interface Neo4jTarget {
  uri: string;
  user: string;
  password: string;
  database: string;
  stop: () => Promise<void>;
}

/** Where the Neo4j suites can run: 'uri' (NEO4J_URI), 'docker' (testcontainers), or null. */
export function neo4jAvailability(): 'uri' | 'docker' | null {
  if (process.env.NEO4J_URI) return 'uri';
  return dockerAnswers() ? 'docker' : null;
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
    return {
      uri: process.env.NEO4J_URI,
      user: process.env.NEO4J_USER ?? 'neo4j',
      password: process.env.NEO4J_PASSWORD ?? '',
      database: process.env.NEO4J_DATABASE ?? 'neo4j',
      stop: () => Promise.resolve(),
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
 * Empties the test database, refusing one that holds data this suite did not
 * write: a NEO4J_URI pointed at a real database must never be wiped.
 */
export async function emptyNeo4j(t: Neo4jTarget): Promise<void> {
  const driver = neo4j.driver(t.uri, neo4j.auth.basic(t.user, t.password));
  const session = driver.session({ database: t.database });
  try {
    const res = await session.run('MATCH (c:Company) RETURN count(c) AS companies');
    const companies = Number(res.records[0]?.get('companies') ?? 0);
    if (companies > MAX_TEST_COMPANIES)
      throw new Error(
        `the Neo4j test database ${t.database} holds ${companies} companies, more than any test writes; use an empty one`,
      );
    await session.run('MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS');
  } finally {
    await session.close();
    await driver.close();
  }
}

/** More companies than the test seeds and import fixtures hold: such a database is someone's data. */
const MAX_TEST_COMPANIES = 100;

/** An opened, migrated adapter on the test server. */
export async function openNeo4jStore(t: Neo4jTarget): Promise<Neo4jGraphStore> {
  const store = new Neo4jGraphStore({
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

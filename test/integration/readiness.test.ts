import fs from 'node:fs';
import { Dependencies } from '../../src/http/dependencies';
import { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import { Pool } from 'pg';
import {
  MONGO_HINT,
  POSTGRES_HINT,
  REDIS_HINT,
  describeWithService,
  testMongoUrl,
  testPostgresUrl,
  testRedisUrl,
} from '../support/services';
import { runCli } from '../support/cli';
import { Relay } from '../support/relay';
import { tempDir } from '../support/paths';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

interface Ready {
  status: string;
  dependencies?: Record<string, string>;
}

describeWithService('/readyz and the jobs database', testRedisUrl(), REDIS_HINT, (url) => {
  jest.setTimeout(60_000);
  let relay: Relay;
  let t: TestServer;
  const readyz = async (): Promise<[number, Ready]> => {
    const res = await fetch(`${t.base}/readyz`);
    return [res.status, (await res.json()) as Ready];
  };
  /** /readyz once it says `status` (it checks at most once a second). */
  const until = async (status: string): Promise<[number, Ready]> => {
    for (const end = Date.now() + 20_000; ;) {
      const answer = await readyz();
      if (answer[1].status === status || Date.now() > end) return answer;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  beforeAll(async () => {
    const target = new URL(url);
    relay = new Relay(target.hostname, Number(target.port || 6379));
    await relay.open();
    // A database of its own (14), so that no other suite's queue is touched.
    const through = `redis://127.0.0.1:${relay.port}/14`;
    t = await startTestServer({ JOBS_BACKEND: 'redis', REDIS_URL: through, JOBS_WORKER: 'false' }, null);
  });
  afterAll(async () => {
    // The server first, while its database answers: it closes its connections cleanly.
    await t?.stop();
    await relay.cut();
  });

  it('is ready while the jobs database answers, unavailable while it does not, and ready again after', async () => {
    expect(await until('ready')).toEqual([
      200,
      expect.objectContaining({ dependencies: { jobs_database: 'reachable' } }),
    ]);
    await relay.cut();
    const started = Date.now();
    expect(await until('unavailable')).toEqual([
      503,
      expect.objectContaining({ status: 'unavailable', dependencies: { jobs_database: 'unreachable' } }),
    ]);
    // Bounded by the check's own wait, not the driver's.
    expect(Date.now() - started).toBeLessThan(15_000);
    await relay.open();
    expect(await until('ready')).toEqual([
      200,
      expect.objectContaining({ dependencies: { jobs_database: 'reachable' } }),
    ]);
  });
});

describe('/readyz and a Neo4j server', () => {
  it("finds a Neo4j server that is gone unreachable within the check's wait, and one that answers reachable", async () => {
    // Nothing listens on port 1: the driver would try again for half a minute.
    const gone = new Neo4jGraphStore({
      uri: 'bolt://127.0.0.1:1',
      user: 'neo4j',
      password: 'x',
      maxPoolSize: 1,
      acquireTimeoutMs: 60_000,
      connectTimeoutMs: 60_000,
      database: 'neo4j',
      queryTimeoutMs: 60_000,
      importBatchSize: 1,
      generationPollMs: 60_000,
      migrateOnOpen: false,
    });
    try {
      const started = Date.now();
      const dependencies = new Dependencies({ graph_store: () => gone.reachable() }, 1000);
      expect(await dependencies.check()).toEqual({ graph_store: 'unreachable' });
      expect(Date.now() - started).toBeLessThan(5000);
      // Asked again at once: the same answer, without asking the server again.
      expect(await dependencies.check()).toEqual({ graph_store: 'unreachable' });
      expect(await new Dependencies({ graph_store: () => Promise.resolve() }).check()).toEqual({
        graph_store: 'reachable',
      });
      // A check that never settles is not asked again while it hangs: no pile of them.
      let asked = 0;
      const hanging = new Dependencies(
        { jobs_database: () => (asked++, new Promise(() => undefined)) },
        50,
        0,
      );
      for (let i = 0; i < 3; i++) expect(await hanging.check()).toEqual({ jobs_database: 'unreachable' });
      expect(asked).toBe(1);
    } finally {
      await gone.close();
    }
  });
});

/**
 * A jobs database that stops answering under a running server with its worker on: polls and starts
 * are answered 503 within seconds, the process lives on (the drivers' connection errors are heard),
 * and polls succeed again once the database is back.
 */
function describeStopsAnswering(
  name: string,
  url: string | null,
  hint: string,
  defaultPort: number,
  env: (relayPort: number, target: URL) => Record<string, string> | Promise<Record<string, string>>,
  cleanUp: () => void | Promise<void> = () => undefined,
): void {
  describeWithService(`a ${name} jobs database that stops answering`, url, hint, (found) => {
    jest.setTimeout(90_000);
    let relay: Relay;
    let t: TestServer;

    beforeAll(async () => {
      const target = new URL(found);
      relay = new Relay(target.hostname, Number(target.port || defaultPort));
      await relay.open();
      t = await startTestServer(await env(relay.port, target));
    });
    afterAll(async () => {
      await t?.stop();
      await relay.cut();
      await cleanUp();
    });

    it('answers polls and starts with 503 and Retry-After within seconds, and lives on to answer again', async () => {
      const started = await t.post('/v1/tierviewjob/', {
        root_nodes: 'boeing',
        num_tiers: '1',
        direction: 'supplier',
      });
      expect(started.status).toBe(200);
      const { run_id } = (await started.json()) as { run_id: number };
      await relay.cut();
      for (const ask of [
        () => t.get(`/v1/jobs/${run_id}/`),
        () => t.post('/v1/tierviewjob/', { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' }),
      ]) {
        const begun = Date.now();
        const res = await ask();
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(((await res.json()) as { code: string }).code).toBe('UNAVAILABLE');
        expect(Date.now() - begun).toBeLessThan(15_000);
      }
      // Long enough for the drivers to fail reconnecting a few times, as a restart of the database would.
      await new Promise((r) => setTimeout(r, 3000));
      expect((await fetch(`${t.base}/healthz`)).status).toBe(200);
      await relay.open();
      for (const end = Date.now() + 30_000; ;) {
        const res = await t.get(`/v1/jobs/${run_id}/`);
        if (res.status === 200 || Date.now() > end) {
          expect(res.status).toBe(200);
          break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    });
  });
}

describeStopsAnswering('MongoDB', testMongoUrl(), MONGO_HINT, 27017, (port) => ({
  JOBS_BACKEND: 'mongodb',
  MONGODB_URI: `mongodb://127.0.0.1:${port}/tiergraph_test_unreachable_${process.pid}`,
}));

const pgSchema = `unreachable_${process.pid}`;
let pgAdmin: Pool | null = null;
describeStopsAnswering(
  'PostgreSQL',
  testPostgresUrl(),
  POSTGRES_HINT,
  5432,
  async (port, target) => {
    // Tables of their own, so that no other suite's queue is touched.
    pgAdmin = new Pool({ connectionString: target.toString(), max: 1 });
    await pgAdmin.query(`CREATE SCHEMA IF NOT EXISTS "${pgSchema}"`);
    const through = new URL(target.toString());
    through.host = `127.0.0.1:${port}`;
    through.searchParams.set('options', `-c search_path=${pgSchema}`);
    return { JOBS_BACKEND: 'postgres', POSTGRES_URL: through.toString() };
  },
  async () => {
    await pgAdmin?.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`);
    await pgAdmin?.end();
  },
);

// A database of its own (13), so that no other suite's queue is touched.
describeStopsAnswering('Redis', testRedisUrl(), REDIS_HINT, 6379, (port) => ({
  JOBS_BACKEND: 'redis',
  REDIS_URL: `redis://127.0.0.1:${port}/13`,
}));

describe.each([
  [
    'PostgreSQL',
    { JOBS_BACKEND: 'postgres', POSTGRES_URL: 'postgres://someone:secret@127.0.0.1:1/tiergraph' },
    'PostgreSQL (JOBS_BACKEND=postgres) cannot be used at postgres://127.0.0.1:1/tiergraph: connect ECONNREFUSED',
  ],
  [
    'Redis',
    { JOBS_BACKEND: 'redis', REDIS_URL: 'redis://someone:secret@127.0.0.1:1/3' },
    'Redis (JOBS_BACKEND=redis) does not answer at redis://127.0.0.1:1/3: connect ECONNREFUSED',
  ],
])('a start whose %s jobs database does not answer', (_name, env, message) => {
  it('stops within seconds with the reason and the URL without its password', () => {
    const dataDir = tempDir('jobs-db-gone');
    try {
      const begun = Date.now();
      const r = runCli(['serve'], {
        DATA_DIR: dataDir,
        PORT: '0',
        SEED_DEMO: 'false',
        API_KEYS: 'a-key-long-enough-0123',
        LOG_LEVEL: 'error',
        ...env,
      });
      expect(r.status).toBe(1);
      expect(r.err).toContain(message);
      expect(r.err).not.toContain('secret');
      expect(Date.now() - begun).toBeLessThan(30_000);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a start whose MongoDB does not answer', () => {
  it('stops at once with the reason, the URI without its password, and no stack of a closed client', () => {
    const dataDir = tempDir('mongo-gone');
    try {
      const r = runCli(['serve'], {
        DATA_DIR: dataDir,
        PORT: '0',
        SEED_DEMO: 'false',
        API_KEYS: 'a-key-long-enough-0123',
        JOBS_BACKEND: 'mongodb',
        // Nothing listens on port 1.
        MONGODB_URI: 'mongodb://someone:secret@127.0.0.1:1/tiergraph',
        LOG_LEVEL: 'error',
      });
      expect(r.status).toBe(1);
      expect(r.err).toContain(
        'MongoDB (JOBS_BACKEND=mongodb) does not answer at mongodb://127.0.0.1:1/tiergraph: connect ECONNREFUSED',
      );
      expect(r.err).not.toContain('secret');
      expect(r.err).not.toContain('MongoTopologyClosedError');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

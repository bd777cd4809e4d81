import path from 'node:path';
import { Pool } from 'pg';
import { Redis } from 'ioredis';
import type { TierViewRequest } from '../../src/domain/tierview';
import type { JobView } from '../../src/jobs/job-queue';
import { TierViewService } from '../../src/services/tierview.service';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { CountingExport } from '../support/counting-export';
import { makeQueue } from '../support/job-queue-harness';
import { readSeed, tempDir } from '../support/paths';
import {
  MONGO_HINT,
  POSTGRES_HINT,
  REDIS_HINT,
  describeWithService,
  testMongoUrl,
  testPostgresUrl,
  testRedisUrl,
} from '../support/services';

const request = (tiers: number): TierViewRequest => ({
  root_nodes: 'boeing',
  num_tiers: tiers,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
});

const ended = (v: JobView) =>
  v.state.life_cycle_state === 'TERMINATED' || v.state.life_cycle_state === 'INTERNAL_ERROR';

async function until(view: () => Promise<JobView>, ok: (v: JobView) => boolean): Promise<JobView> {
  const end = Date.now() + 30_000;
  for (;;) {
    const v = await view();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`state not reached: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The whole queue (Agenda + run store of the engine, real export on the embedded store) per jobs engine. */
function lifecycle(kind: 'postgres' | 'redis' | 'mongodb', url: string, reset: () => Promise<void>): void {
  let dir: string;
  let store: EmbeddedGraphStore;
  beforeAll(async () => {
    await reset();
    dir = tempDir('jobs-engine');
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 128 });
    await store.open();
    await store.runScript(splitStatements(readSeed('test-small.cypher')));
  });
  afterAll(async () => {
    await store.close();
  });

  const engineConfig = () => ({
    JOBS_BACKEND: kind,
    POSTGRES_URL: kind === 'postgres' ? url : undefined,
    REDIS_URL: kind === 'redis' ? url : undefined,
    MONGODB_URI: kind === 'mongodb' ? url : undefined,
  });

  it('runs queued exports to SUCCESS with increasing run ids, and cancels a pending one', async () => {
    const config = engineConfig();
    const { queue, engine } = makeQueue(
      dir,
      store,
      (b) => new TierViewService(store, b),
      { concurrency: 2 },
      config,
    );
    await queue.start();
    try {
      const runs = [];
      for (let i = 0; i < 8; i++) runs.push(await queue.submit(request((i % 3) + 1)));
      const ids = runs.map((r) => r.runId);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      const ends = await Promise.all(ids.map((id) => until(() => queue.view(id), ended)));
      expect(ends.map((v) => v.state.result_state)).toEqual(ids.map(() => 'SUCCESS'));
      expect(ends.every((v) => v.output !== null && 'result' in v.output)).toBe(true);
    } finally {
      await queue.close();
      await engine.close();
    }
    // A queue that only queues: the run waits, then is canceled.
    const producer = makeQueue(dir, store, (b) => new TierViewService(store, b), { worker: false }, config);
    await producer.queue.start();
    try {
      const run = await producer.queue.submit(request(2));
      expect((await producer.queue.view(run.runId)).state.life_cycle_state).toBe('PENDING');
      const canceled = await producer.queue.cancel(run.runId);
      expect(canceled.state).toMatchObject({ result_state: 'CANCELED', user_cancelled_or_timedout: true });
    } finally {
      await producer.queue.close();
      await producer.engine.close();
    }
  });
  it('exports each run once when runs wait longer than the lock lifetime', async () => {
    let exporter: CountingExport | undefined;
    const { queue, engine, blobs } = makeQueue(
      dir,
      store,
      (b) => (exporter = new CountingExport(store, b, 200)),
      { concurrency: 2, lockS: 1, pollMs: 100 },
      engineConfig(),
    );
    await queue.start();
    try {
      const runs = await Promise.all(Array.from({ length: 16 }, () => queue.submit(request(3))));
      const ends = await Promise.all(runs.map((r) => until(() => queue.view(r.runId), ended)));
      expect(ends.map((v) => v.state.result_state)).toEqual(runs.map(() => 'SUCCESS'));
      expect(runs.map((r) => exporter!.calls.get(queue.publicRunId(r.runId)))).toEqual(runs.map(() => 1));
      for (const v of ends) {
        const link = new URL(
          (JSON.parse((v.output as { result: string }).result) as Record<string, string>).tierview_file!,
        );
        const key = link.pathname.slice('/downloads/'.length);
        expect(() =>
          blobs.verify(key, link.searchParams.get('expires'), link.searchParams.get('signature')),
        ).not.toThrow();
      }
    } finally {
      await queue.close();
      await engine.close();
    }
  }, 60_000);
}

describeWithService('job queue on PostgreSQL', testPostgresUrl(), POSTGRES_HINT, (url) =>
  lifecycle('postgres', url, async () => {
    const pool = new Pool({ connectionString: url });
    try {
      await pool.query('DROP TABLE IF EXISTS tiergraph_jobs, tiergraph_runs');
    } finally {
      await pool.end();
    }
  }),
);

describeWithService('job queue on Redis', testRedisUrl(), REDIS_HINT, (url) =>
  lifecycle('redis', url, async () => {
    const redis = new Redis(url);
    try {
      for (const pattern of ['tiergraph:jobs:*', 'tiergraph:runs:*']) {
        const keys = await redis.keys(pattern);
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      await redis.quit();
    }
  }),
);

describeWithService('job queue on MongoDB', testMongoUrl(), MONGO_HINT, (url) =>
  lifecycle('mongodb', url, () => Promise.resolve()),
);

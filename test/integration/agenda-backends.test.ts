import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agenda } from 'agenda';
import type { AgendaBackend, Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend } from '@agendajs/postgres-backend';
import { RedisBackend } from '@agendajs/redis-backend';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
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

/**
 * Agenda 6 with the job backends that `JOBS_BACKEND` selects, against real servers:
 * what the export worker relies on (a job runs once, per-job concurrency holds,
 * shutdown waits for running jobs and leaves nothing open).
 */

const PROCESS_EVERY_MS = 100;
// While a job runs, Agenda re-checks its lock every lockLifetime / 2 with a timer it
// does not cancel when the job ends or when Agenda stops. A short lifetime keeps that
// timer short, and afterEach outlasts it so that jest sees no open handle.
const LOCK_LIFETIME_MS = 2000;
const ALIVE_CHECK_MS = Math.max(PROCESS_EVERY_MS, LOCK_LIFETIME_MS) / 2;

/** A backend over a namespace no other test uses, and how to remove that namespace. */
type MakeBackend = () => Promise<{ backend: AgendaBackend; cleanup: () => Promise<void> }>;

const unique = (): string => randomBytes(5).toString('hex');

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function agendaSuite(makeBackend: MakeBackend): void {
  const started: Agenda[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let errors: Error[] = [];

  async function startAgenda(define: (agenda: Agenda) => void): Promise<Agenda> {
    const { backend, cleanup } = await makeBackend();
    cleanups.push(cleanup);
    const agenda = new Agenda({
      backend,
      name: `tiergraph-test-${unique()}`,
      processEvery: PROCESS_EVERY_MS,
      defaultLockLifetime: LOCK_LIFETIME_MS,
    });
    agenda.on('error', (err: Error) => errors.push(err));
    define(agenda);
    await agenda.start();
    started.push(agenda);
    return agenda;
  }

  beforeEach(() => {
    errors = [];
  });
  afterEach(async () => {
    // A test that failed before its own drain still shuts down here.
    for (const agenda of started.splice(0)) await agenda.drain();
    await sleep(ALIVE_CHECK_MS + 100);
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  test('a job scheduled now runs once and is recorded as finished', async () => {
    const runs: unknown[] = [];
    const agenda = await startAgenda((a) =>
      a.define('export-once', (job: Job<{ runId: number }>) => {
        runs.push(job.attrs.data);
        return Promise.resolve();
      }),
    );
    await agenda.now('export-once', { runId: 7 });
    await waitFor('the job to run', () => runs.length > 0);
    // Several more polling rounds: a job that was not marked finished would run again.
    await sleep(PROCESS_EVERY_MS * 6);
    expect(runs).toEqual([{ runId: 7 }]);
    const { jobs } = await agenda.queryJobs({ name: 'export-once' });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.lastFinishedAt).toBeInstanceOf(Date);
    expect(jobs[0]!.failedAt ?? null).toBeNull();
    await agenda.drain();
    expect(errors).toEqual([]);
  });

  test('20 jobs with concurrency 2 each run exactly once, never more than 2 at a time', async () => {
    const ran: number[] = [];
    let running = 0;
    let maxRunning = 0;
    const agenda = await startAgenda((a) =>
      a.define(
        'export-batch',
        async (job: Job<{ i: number }>) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          await sleep(40);
          ran.push(job.attrs.data.i);
          running -= 1;
        },
        { concurrency: 2 },
      ),
    );
    for (let i = 0; i < 20; i++) await agenda.now('export-batch', { i });
    await waitFor('20 runs', () => ran.length >= 20);
    await sleep(PROCESS_EVERY_MS * 6);
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(maxRunning).toBe(2);
    await agenda.drain();
    expect(errors).toEqual([]);
  });

  test('drain waits for a running job to finish before it disconnects', async () => {
    let finished = false;
    const agenda = await startAgenda((a) =>
      a.define('export-slow', async () => {
        await sleep(500);
        finished = true;
      }),
    );
    let startedRunning = false;
    agenda.on('start:export-slow', () => {
      startedRunning = true;
    });
    await agenda.now('export-slow');
    await waitFor('the job to start', () => startedRunning);
    const result = await agenda.drain();
    expect(finished).toBe(true);
    expect(result).toMatchObject({ completed: 1, running: 0, timedOut: false });
    expect(errors).toEqual([]);
  });
}

describeWithService('Agenda with PostgresBackend', testPostgresUrl(), POSTGRES_HINT, (url) => {
  let admin: Pool;
  beforeAll(() => {
    admin = new Pool({ connectionString: url, max: 1 });
  });
  afterAll(() => admin.end());

  agendaSuite(() => {
    const id = unique();
    // Besides the jobs table, connecting creates the log table (even with logging
    // off) and a trigger function named after the jobs table; the LISTEN channel is
    // database-wide, so it is per test too.
    const tableName = `agenda_jobs_${id}`;
    const logTableName = `agenda_logs_${id}`;
    const backend = new PostgresBackend({
      connectionString: url,
      tableName,
      logTableName,
      channelName: `agenda_${id}`,
    });
    const cleanup = async (): Promise<void> => {
      await admin.query(`DROP TABLE IF EXISTS "${tableName}", "${logTableName}"`);
      await admin.query(`DROP FUNCTION IF EXISTS update_${tableName}_updated_at()`);
    };
    return Promise.resolve({ backend, cleanup });
  });
});

describeWithService('Agenda with RedisBackend', testRedisUrl(), REDIS_HINT, (url) => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(() => admin.quit());

  agendaSuite(() => {
    const keyPrefix = `tiergraph-test:agenda:${unique()}:`;
    // Pub/Sub channels ignore the database number, so the channel is per test as well.
    const backend = new RedisBackend({ connectionString: url, keyPrefix, channelName: `${keyPrefix}notify` });
    const cleanup = async (): Promise<void> => {
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    };
    return Promise.resolve({ backend, cleanup });
  });
});

describeWithService('Agenda with MongoBackend', testMongoUrl(), MONGO_HINT, (url) => {
  let client: MongoClient;
  beforeAll(async () => {
    client = new MongoClient(url);
    await client.connect();
  });
  afterAll(() => client.close());

  agendaSuite(() => {
    // A database the test passes in is not closed by Agenda; afterAll closes the client.
    const db = client.db(`tiergraph_test_agenda_${unique()}`);
    const backend = new MongoBackend({ mongo: db });
    return Promise.resolve({ backend, cleanup: async () => void (await db.dropDatabase()) });
  });
});

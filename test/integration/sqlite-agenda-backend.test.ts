import { execFile } from 'node:child_process';
import { req } from '../support/run-store.contract';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { Agenda } from 'agenda';
import type { AgendaOptions, JobParameters } from 'agenda';
import { SqliteJobBackend } from '../../src/jobs/engines/sqlite/sqlite.agenda-backend';
import { openSqliteFile } from '../../src/jobs/engines/sqlite/sqlite.connection';
import { SqliteRunStore } from '../../src/jobs/engines/sqlite/sqlite.run-store';
import { ROOT, tempDir } from '../support/paths';

const dir = tempDir('sqlite-agenda-backend');
let files = 0;
const freshFile = (): string => path.join(dir, `jobs-${++files}.sqlite`);

// Short lock lifetimes keep the liveness timer Agenda runs next to each job (half the lifetime) brief after drain().
const LOCK_LIFETIME = 1000;

const connections: Database[] = [];
let agendas: Agenda[] = [];

/** A connection the test owns; backends given `{ db }` never close it. */
function openDb(file = freshFile()): Database {
  const db = openSqliteFile(file);
  connections.push(db);
  return db;
}

function newAgenda(backend: SqliteJobBackend, options: Partial<AgendaOptions> = {}): Agenda {
  const agenda = new Agenda({ backend, processEvery: 50, defaultLockLifetime: LOCK_LIFETIME, ...options });
  agendas.push(agenda);
  return agenda;
}

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

afterEach(async () => {
  // drain() rather than stop(): running jobs finish, so no job keeps a timer or a promise going.
  for (const agenda of agendas.splice(0)) await agenda.drain();
  for (const db of connections.splice(0)) db.close();
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('SqliteJobBackend with Agenda', () => {
  test('a defined job runs once and is marked finished', async () => {
    const backend = new SqliteJobBackend({ db: openDb() });
    const agenda = newAgenda(backend);
    const seen: unknown[] = [];
    agenda.define('hello', (job) => {
      seen.push(job.attrs.data);
      return Promise.resolve();
    });
    await agenda.start();
    const job = await agenda.now('hello', { to: 'world', n: 1 });

    await until(
      'the job to finish',
      async () => (await backend.repository.getJobById(job.attrs._id!))?.lastFinishedAt !== undefined,
    );
    await sleep(300); // several polls: a finished one-off job must not be picked up again
    expect(seen).toEqual([{ to: 'world', n: 1 }]);
    const stored = await backend.repository.getJobById(job.attrs._id!);
    expect(stored).toMatchObject({
      name: 'hello',
      nextRunAt: null,
      lockedAt: undefined,
      failedAt: undefined,
    });
    expect(stored!.lastRunAt!.getTime()).toBeLessThanOrEqual(stored!.lastFinishedAt!.getTime());
    const { jobs } = await agenda.queryJobs({ name: 'hello' });
    expect(jobs.map((j) => j.state)).toEqual(['completed']);
  });

  test('30 jobs with concurrency 2 each run exactly once', async () => {
    const backend = new SqliteJobBackend({ db: openDb() });
    const agenda = newAgenda(backend);
    const runs = new Map<number, number>();
    let running = 0;
    let maxRunning = 0;
    agenda.define<{ i: number }>(
      'batch',
      async (job) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        runs.set(job.attrs.data.i, (runs.get(job.attrs.data.i) ?? 0) + 1);
        await sleep(15);
        running--;
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 30; i++) await agenda.now('batch', { i });
    await agenda.start();

    await until('30 distinct runs', () => runs.size === 30, 15000);
    await until(
      'all jobs finished',
      async () => (await agenda.queryJobs({ name: 'batch', state: 'completed' })).total === 30,
    );
    await sleep(200);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(maxRunning).toBe(2);
  });

  test('two workers on separate connections to one file share 30 jobs without running any twice', async () => {
    const file = freshFile();
    const runs = new Map<number, string[]>();
    const define = (agenda: Agenda, worker: string) =>
      agenda.define<{ i: number }>(
        'shared',
        async (job) => {
          runs.set(job.attrs.data.i, [...(runs.get(job.attrs.data.i) ?? []), worker]);
          await sleep(10);
        },
        // A lock limit keeps one worker from locking every due job in a single scan.
        { concurrency: 2, lockLimit: 2 },
      );
    const a = newAgenda(new SqliteJobBackend({ path: file }), { name: 'a' });
    const b = newAgenda(new SqliteJobBackend({ path: file }), { name: 'b' });
    define(a, 'a');
    define(b, 'b');
    for (let i = 0; i < 30; i++) await a.now('shared', { i });
    await Promise.all([a.start(), b.start()]);

    await until('30 distinct runs', () => runs.size === 30, 15000);
    await sleep(300);
    const twice = [...runs.entries()].filter(([, by]) => by.length > 1);
    expect(twice).toEqual([]);
    const byWorker = [...runs.values()].flat();
    // Both took part (the lock is contended, not just uncontested).
    expect(new Set(byWorker)).toEqual(new Set(['a', 'b']));
  });

  test('a job locked by a process that died is taken up again once its lock lifetime has passed', async () => {
    const backend = new SqliteJobBackend({ db: openDb() });
    await backend.connect();
    const repo = backend.repository;
    const base: JobParameters = { name: 'recover', priority: 0, nextRunAt: null, type: 'normal', data: null };
    const stale = await repo.saveJob(
      { ...base, nextRunAt: new Date(Date.now() - 120_000), data: { which: 'stale' } },
      undefined,
    );
    const fresh = await repo.saveJob(
      { ...base, nextRunAt: new Date(Date.now() - 100_000), data: { which: 'fresh' } },
      undefined,
    );

    // What a worker leaves behind when it dies mid-run: locked, started, a one-off's nextRunAt already cleared.
    const lockedLongAgo = new Date(Date.now() - 60_000);
    expect(
      await repo.getNextJobToRun('recover', new Date(), new Date(0), lockedLongAgo, undefined),
    ).toMatchObject({
      _id: stale._id,
      lockedAt: lockedLongAgo,
    });
    await repo.saveJobState(
      { ...stale, lockedAt: lockedLongAgo, lastRunAt: lockedLongAgo, nextRunAt: null },
      undefined,
    );
    // A second one locked just now by a live worker must stay with that worker.
    const lockedNow = new Date();
    await repo.getNextJobToRun('recover', new Date(), new Date(0), lockedNow, undefined);
    expect((await repo.getJobById(fresh._id!))?.lockedAt).toEqual(lockedNow);

    const agenda = newAgenda(backend);
    const seen: unknown[] = [];
    agenda.define('recover', (job) => {
      seen.push(job.attrs.data);
      return Promise.resolve();
    });
    await agenda.start();
    await until(
      'the stale job to finish',
      async () => (await repo.getJobById(stale._id!))?.lastFinishedAt !== undefined,
    );
    await sleep(300);
    expect(seen).toEqual([{ which: 'stale' }]);
    expect(await repo.getJobById(stale._id!)).toMatchObject({ lockedAt: undefined, nextRunAt: null });
  });

  test('a job whose Agenda stopped mid-run is finished by another instance on the same file', async () => {
    const file = freshFile();
    const first = newAgenda(new SqliteJobBackend({ path: file }), { name: 'first' });
    const started: string[] = [];
    // Never settles: the run is cut off by stop(), as by a crash.
    first.define('long', () => {
      started.push('first');
      return new Promise<void>(() => undefined);
    });
    await first.start();
    const job = await first.now('long', { attempt: 1 });
    await until('the first run to start', () => started.length === 1);
    // stop() releases only locks of jobs that have not started; the running one keeps its lock.
    await first.stop();
    agendas = agendas.filter((a) => a !== first);

    const backend = new SqliteJobBackend({ path: file });
    const second = newAgenda(backend, { name: 'second' });
    second.define('long', () => {
      started.push('second');
      return Promise.resolve();
    });
    const restartedAt = Date.now();
    await second.start();
    await until(
      'the second run to finish',
      async () => (await backend.repository.getJobById(job.attrs._id!))?.lastFinishedAt !== undefined,
    );
    // Not before the lock had aged past its lifetime.
    expect(Date.now() - restartedAt).toBeGreaterThanOrEqual(LOCK_LIFETIME / 2);
    expect(started).toEqual(['first', 'second']);
    expect(await backend.repository.getJobById(job.attrs._id!)).toMatchObject({
      lockedAt: undefined,
      lastModifiedBy: 'second',
    });
  });
});

/**
 * A worker process: waits for a common start time, then locks 'work' jobs until
 * none is left and prints the ids it got. Node loads the TypeScript source via
 * the tests' register hook and Agenda's ES modules natively.
 */
const LOCKING_CHILD = `
const { SqliteJobBackend } = require(${JSON.stringify(path.join(ROOT, 'src/jobs/engines/sqlite/sqlite.agenda-backend.ts'))});
(async () => {
  const [file, worker, startAt] = process.argv.slice(1);
  const backend = new SqliteJobBackend({ path: file });
  await backend.connect();
  while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 5));
  const ids = [];
  for (;;) {
    const job = await backend.repository.getNextJobToRun('work', new Date(), new Date(0), undefined, { lastModifiedBy: worker });
    if (!job) break;
    ids.push(job._id);
    // A short pause now and then: SQLite's busy handler polls, so a worker that never
    // pauses can keep the lock to itself and the other one would only ever wait.
    if (ids.length % 10 === 0) await new Promise((r) => setTimeout(r, 2));
  }
  await backend.disconnect();
  process.stdout.write(JSON.stringify(ids));
})();
`;

describe('SqliteJobBackend across processes', () => {
  test('two processes locking jobs from one file never get the same job and never fail on the lock', async () => {
    const file = freshFile();
    const backend = new SqliteJobBackend({ path: file });
    await backend.connect();
    const due = new Date(Date.now() - 1000);
    const count = 1000;
    for (let i = 0; i < count; i++) {
      await backend.repository.saveJob(
        { name: 'work', priority: 0, nextRunAt: due, type: 'normal', data: { i } },
        undefined,
      );
    }
    await backend.disconnect();

    const startAt = String(Date.now() + 2500);
    const run = (worker: string) =>
      promisify(execFile)(
        process.execPath,
        ['-r', path.join(ROOT, 'test/support/ts-register.js'), '-e', LOCKING_CHILD, file, worker, startAt],
        { timeout: 30_000 },
      );
    const [a, b] = await Promise.all([run('a'), run('b')]);
    const idsA = JSON.parse(a.stdout) as string[];
    const idsB = JSON.parse(b.stdout) as string[];

    expect(idsA.filter((id) => idsB.includes(id))).toEqual([]);
    expect(new Set([...idsA, ...idsB]).size).toBe(count);
    // Both took part, so the lock really was contended between the processes.
    expect(idsA.length).toBeGreaterThan(0);
    expect(idsB.length).toBeGreaterThan(0);
  });
});

describe('SqliteJobBackend queries', () => {
  let agenda: Agenda;
  let backend: SqliteJobBackend;

  beforeEach(async () => {
    backend = new SqliteJobBackend({ db: openDb() });
    // Never started: jobs stay where the test puts them.
    agenda = new Agenda({ backend, processEvery: 50, defaultLockLifetime: LOCK_LIFETIME });
    await agenda.ready;
  });

  test('queryJobs filters, pages and computes states; getJobById round-trips a job', async () => {
    const report = await agenda.now('report', {
      org: { id: 7, region: 'eu' },
      tags: ['a', 'b'],
      at: new Date(0),
    });
    await agenda.schedule('in 10 minutes', 'report', { org: { id: 8, region: 'us' } });
    await agenda.schedule(new Date(Date.now() + 60_000), 'digest', { org: { id: 7, region: 'eu' } });
    await agenda.every('1 hour', 'cleanup');

    const byId = await backend.repository.getJobById(report.attrs._id!);
    expect(byId).toMatchObject({
      _id: report.attrs._id,
      name: 'report',
      type: 'normal',
      data: { org: { id: 7, region: 'eu' }, tags: ['a', 'b'], at: new Date(0).toISOString() },
      nextRunAt: report.attrs.nextRunAt,
    });
    expect(await backend.repository.getJobById('no-such-id')).toBeNull();

    expect((await agenda.queryJobs()).total).toBe(4);
    expect((await agenda.queryJobs({ name: 'report' })).total).toBe(2);
    expect((await agenda.queryJobs({ names: ['digest', 'cleanup'] })).jobs.map((j) => j.name).sort()).toEqual(
      ['cleanup', 'digest'],
    );
    expect((await agenda.queryJobs({ search: 'EPO' })).jobs.map((j) => j.name)).toEqual(['report', 'report']);
    expect((await agenda.queryJobs({ search: '%' })).total).toBe(0);
    // A partial data filter matches on the fields it names, nested ones included.
    const eu = await agenda.queryJobs({ data: { org: { region: 'eu' } } });
    expect(eu.jobs.map((j) => j.name).sort()).toEqual(['digest', 'report']);
    expect((await agenda.queryJobs({ data: { org: { id: '7' } } })).total).toBe(0);
    expect((await agenda.queryJobs({ data: { tags: ['a', 'b'] } })).total).toBe(1);

    const states = (await agenda.queryJobs()).jobs.map((j) => j.state);
    expect(states.sort()).toEqual(['queued', 'repeating', 'scheduled', 'scheduled']);
    expect((await agenda.queryJobs({ state: 'scheduled' })).total).toBe(2);
    expect((await agenda.queryJobs({ state: 'queued' })).jobs.map((j) => j._id)).toEqual([report.attrs._id]);

    const sorted = await agenda.queryJobs({ sort: { nextRunAt: 'asc' } });
    const times = sorted.jobs.map((j) => j.nextRunAt!.getTime());
    expect(times).toEqual([...times].sort((x, y) => x - y));
    const page = await agenda.queryJobs({ sort: { nextRunAt: 'asc' }, skip: 1, limit: 2 });
    expect(page.total).toBe(4);
    expect(page.jobs.map((j) => j._id)).toEqual(sorted.jobs.slice(1, 3).map((j) => j._id));
    const statePage = await agenda.queryJobs({
      state: 'scheduled',
      sort: { nextRunAt: 'asc' },
      skip: 1,
      limit: 5,
    });
    expect(statePage.total).toBe(2);
    expect(statePage.jobs).toHaveLength(1);

    expect(await backend.repository.getDistinctJobNames()).toEqual(['cleanup', 'digest', 'report']);
    await sleep(5);
    // Due: the one-off 'report' and the repeating 'cleanup', whose first run is at its definition.
    expect(await backend.repository.getQueueSize()).toBe(2);
  });

  test('disable, enable and the overview', async () => {
    await agenda.now('a', { n: 1 });
    await agenda.now('a', { n: 2 });
    await agenda.schedule('in 1 hour', 'b', { n: 3 });

    expect(await agenda.disable({ data: { n: 2 } })).toBe(1);
    expect(await agenda.disable({})).toBe(0);
    expect((await agenda.queryJobs({ state: 'paused' })).jobs.map((j) => j.data)).toEqual([{ n: 2 }]);
    expect((await agenda.queryJobs({ name: 'a', includeDisabled: false })).jobs.map((j) => j.data)).toEqual([
      { n: 1 },
    ]);
    expect(await agenda.getJobsOverview()).toEqual([
      {
        name: 'a',
        total: 2,
        running: 0,
        scheduled: 0,
        queued: 2,
        completed: 0,
        failed: 0,
        repeating: 0,
        paused: 1,
      },
      {
        name: 'b',
        total: 1,
        running: 0,
        scheduled: 1,
        queued: 0,
        completed: 0,
        failed: 0,
        repeating: 0,
        paused: 0,
      },
    ]);
    // A disabled job is not handed out even though it is due.
    const locked = await backend.repository.getNextJobToRun(
      'a',
      new Date(),
      new Date(0),
      undefined,
      undefined,
    );
    expect(locked?.data).toEqual({ n: 1 });
    expect(
      await backend.repository.getNextJobToRun('a', new Date(), new Date(0), undefined, undefined),
    ).toBeUndefined();

    expect(await agenda.enable({ name: 'a' })).toBe(2);
    expect((await agenda.queryJobs({ state: 'paused' })).total).toBe(0);
  });

  test('cancel and removeJobs delete what they select and nothing without a selection', async () => {
    const keep = await agenda.now('keep', { k: 1 });
    const x1 = await agenda.now('x', { k: 1 });
    const x2 = await agenda.now('x', { k: 2 });
    await agenda.now('y', { k: 3 });
    await agenda.now('z', { k: 4 });

    expect(await agenda.cancel({})).toBe(0);
    expect(await agenda.cancel({ ids: [] })).toBe(0);
    expect(await agenda.cancel({ name: 'x', data: { k: 2 } })).toBe(1);
    expect(await backend.repository.getJobById(x2.attrs._id!)).toBeNull();
    expect(await backend.repository.getJobById(x1.attrs._id!)).not.toBeNull();
    expect(await agenda.cancel({ ids: [x1.attrs._id!, 'unknown'] })).toBe(1);
    expect(await agenda.cancel({ names: ['y'] })).toBe(1);
    await x1.remove(); // already gone: nothing to delete, no error
    expect(await backend.repository.removeJobs({ notNames: ['keep'] })).toBe(1);
    expect((await agenda.queryJobs()).jobs.map((j) => j._id)).toEqual([keep.attrs._id]);
    expect(await agenda.cancelAll()).toBe(1);
    expect((await agenda.queryJobs()).total).toBe(0);
  });

  test('unique insert-only saves do not duplicate; plain unique saves update the match', async () => {
    const first = await agenda
      .create('mail', { userId: 7, body: 'first' })
      .unique({ 'data.userId': 7 }, { insertOnly: true })
      .save();
    const again = await agenda
      .create('mail', { userId: 7, body: 'second' })
      .unique({ 'data.userId': 7 }, { insertOnly: true })
      .save();
    expect(again.attrs._id).toBe(first.attrs._id);
    expect((await agenda.queryJobs({ name: 'mail' })).jobs.map((j) => j.data)).toEqual([
      { userId: 7, body: 'first' },
    ]);

    // The value's type is part of the key: '7' is another user.
    await agenda
      .create('mail', { userId: '7', body: 'text id' })
      .unique({ 'data.userId': '7' }, { insertOnly: true })
      .save();
    expect((await agenda.queryJobs({ name: 'mail' })).total).toBe(2);

    const updated = await agenda
      .create('mail', { userId: 7, body: 'third' })
      .unique({ 'data.userId': 7 })
      .save();
    expect(updated.attrs._id).toBe(first.attrs._id);
    expect((await backend.repository.getJobById(first.attrs._id!))?.data).toEqual({
      userId: 7,
      body: 'third',
    });
    expect((await agenda.queryJobs({ name: 'mail' })).total).toBe(2);

    await expect(
      agenda.create('mail', {}).unique({ 'lockedAt); DROP TABLE agenda_jobs; --': 1 }).save(),
    ).rejects.toThrow(/unsupported field/);
  });

  test('every() keeps one job per name, and a due run survives a redefinition', async () => {
    const a = await agenda.every('5 minutes', 'tick');
    const b = await agenda.every('10 minutes', 'tick');
    expect(b.attrs._id).toBe(a.attrs._id);
    const [only, ...rest] = (await agenda.queryJobs({ name: 'tick' })).jobs;
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ type: 'single', repeatInterval: '10 minutes', state: 'repeating' });

    // Make the stored run due, then redefine: the pending run must not be moved.
    const due = new Date(Date.now() - 1000);
    await backend.repository.saveJobState({ ...only!, nextRunAt: due }, undefined);
    await agenda.every('10 minutes', 'tick');
    expect((await backend.repository.getJobById(a.attrs._id!))?.nextRunAt).toEqual(due);
  });

  test('debounced saves keep one job and push its run time back', async () => {
    const first = await agenda.nowDebounced('sync', { userId: 1, v: 1 }, { 'data.userId': 1 }, 60_000);
    const firstRunAt = first.attrs.nextRunAt!.getTime();
    expect(firstRunAt).toBeGreaterThan(Date.now() + 50_000);
    await sleep(10);
    const second = await agenda.nowDebounced('sync', { userId: 1, v: 2 }, { 'data.userId': 1 }, 60_000);
    expect(second.attrs._id).toBe(first.attrs._id);
    expect(second.attrs.nextRunAt!.getTime()).toBeGreaterThan(firstRunAt);
    expect(second.attrs.debounceStartedAt).toEqual(first.attrs.debounceStartedAt);
    expect((await backend.repository.getJobById(first.attrs._id!))?.data).toEqual({ userId: 1, v: 2 });
    expect((await agenda.queryJobs({ name: 'sync' })).total).toBe(1);
  });

  test('lockJob locks a due job once, and only while it is unchanged', async () => {
    const job = await backend.repository.saveJob(
      { name: 'once', priority: 0, nextRunAt: new Date(Date.now() - 1000), type: 'normal', data: null },
      undefined,
    );
    const locked = await backend.repository.lockJob(job, { lastModifiedBy: 'w1' });
    expect(locked).toMatchObject({ _id: job._id, lastModifiedBy: 'w1' });
    expect(locked?.lockedAt).toBeInstanceOf(Date);
    expect(await backend.repository.lockJob(job, undefined)).toBeUndefined();
    await backend.repository.unlockJob(job);
    expect(await backend.repository.lockJob({ ...job, nextRunAt: new Date() }, undefined)).toBeUndefined();
    expect(await backend.repository.lockJob(job, undefined)).toBeDefined();
  });

  test('the jobs and the runs tables live side by side in one file', async () => {
    const db = openDb();
    const jobs = new SqliteJobBackend({ db, tableName: 'jobs' });
    const runs = new SqliteRunStore({ db });
    await jobs.connect();
    await runs.open();
    const saved = await jobs.repository.saveJob(
      { name: 'export', priority: 0, nextRunAt: new Date(), type: 'normal', data: { runId: 1 } },
      undefined,
    );
    await runs.create(req(1), new Date());
    await jobs.disconnect();
    await runs.close();
    expect(db.open).toBe(true);
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['jobs', 'runs']));
    expect(
      db.prepare<[string], { name: string }>('SELECT name FROM jobs WHERE id = ?').get(saved._id!),
    ).toEqual({
      name: 'export',
    });
  });
});

describe('SqliteJobBackend connection', () => {
  test('with a path it opens the file on connect, closes it on disconnect and can connect again', async () => {
    const backend = new SqliteJobBackend({ path: freshFile(), tableName: 'queue' });
    expect(backend.ownsConnection).toBe(true);
    await expect(backend.repository.getQueueSize()).rejects.toThrow(/not connected/);
    await backend.connect();
    await backend.repository.saveJob(
      { name: 'due', priority: 0, nextRunAt: new Date(Date.now() - 1000), type: 'normal', data: null },
      undefined,
    );
    await backend.disconnect();
    // Agenda fires some calls without awaiting them: a failure must arrive as a rejection, not a throw.
    let pending: Promise<void> | undefined;
    expect(() => {
      pending = backend.repository.unlockJobs(['x']);
    }).not.toThrow();
    await expect(pending).rejects.toThrow(/not connected/);
    await backend.connect();
    expect(await backend.repository.getQueueSize()).toBe(1);
    await backend.disconnect();
  });

  test('with a passed-in connection it never closes it', async () => {
    const db = openDb();
    const backend = new SqliteJobBackend({ db });
    expect(backend.ownsConnection).toBe(false);
    const agenda = newAgenda(backend);
    agenda.define('noop', () => Promise.resolve());
    await agenda.start();
    await agenda.stop();
    agendas.splice(agendas.indexOf(agenda), 1);
    expect(db.open).toBe(true);
    expect(await backend.repository.getDistinctJobNames()).toEqual([]);
  });

  test('rejects a table name that is not a plain identifier', () => {
    expect(() => new SqliteJobBackend({ db: openDb(), tableName: 'jobs; DROP TABLE runs' })).toThrow(
      /invalid SQLite table name/,
    );
  });
});

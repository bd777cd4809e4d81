import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { Pool } from 'pg';
import { GcsBlobStore } from '../../src/blobs/gcs/gcs.blob-store';
import { ROOT, tempDir } from '../support/paths';
import {
  MONGO_HINT,
  POSTGRES_HINT,
  describeWithService,
  testMongoUrl,
  testPostgresUrl,
} from '../support/services';

/**
 * Several processes, one queue, as a deployment runs them: two API processes that
 * only queue (JOBS_WORKER=false) and one worker, sharing the jobs backend and the
 * export bucket (the Cloud Storage emulator). A run posted to either API process
 * is visible from both; the worker is killed with SIGKILL in the middle of an
 * export, a new one takes over, and the run ends SUCCESS once with complete files.
 */
const EMULATOR = process.env.STORAGE_EMULATOR_HOST?.trim() ?? '';
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const GCS_HINT = 'STORAGE_EMULATOR_HOST is not set: run `source .ci/services.sh`';
if (EMULATOR === '' && inCi)
  throw new Error(`the Cloud Storage emulator is required under CI=true: ${GCS_HINT}`);

const KEY = 'multi-process-key-0123456789';
type Json = Record<string, unknown>;

interface Proc {
  child: ChildProcess;
  base: string;
}

/** Starts one server process and resolves once it listens. */
function startProcess(env: Record<string, string>, out: string[]): Promise<Proc> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'test/support/ts-register.js'),
      path.join(ROOT, 'test/support/queue-process.child.ts'),
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stderr.on('data', (d: Buffer) => out.push(d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "ready" within 60 s: ${text}${out.join('')}`)),
      60_000,
    );
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /ready (\d+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: `http://127.0.0.1:${m[1]}` });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${String(code)}) before it listened: ${text}${out.join('')}`));
    });
  });
}

async function stopProcess(p: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

async function call(p: Proc, method: 'GET' | 'POST', route: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${p.base}${route}`, {
    method,
    headers: { 'X-SERVICE-KEY': KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  expect({ route, status: res.status }).toEqual({ route, status: 200 });
  return json;
}

async function until(what: string, check: () => Promise<boolean>, ms = 90_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const lifeCycle = (v: Json) => (v.state as Json).life_cycle_state;

/** The scenario on one jobs backend; `backendEnv` names it for the child processes. */
function scenario(backendEnv: () => Record<string, string>): void {
  jest.setTimeout(240_000);
  const bucket = `tiergraph-mp-${crypto.randomBytes(5).toString('hex')}`;
  const dirs: string[] = [];
  const logs: string[] = [];
  let gcs: GcsBlobStore;
  let keyFile: string;
  let apiA: Proc | undefined;
  let apiB: Proc | undefined;
  let worker: Proc | undefined;

  const env = (extra: Record<string, string>): Record<string, string> => {
    const dataDir = tempDir('multi-process');
    dirs.push(dataDir);
    return {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      API_KEYS: KEY,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      STORE: 'embedded',
      BLOB_STORE: 'gcs',
      GCS_BUCKET: bucket,
      GCS_KEY_FILE: keyFile,
      GCS_PROJECT_ID: 'tiergraph-test',
      STORAGE_EMULATOR_HOST: EMULATOR,
      JOB_LOCK_S: '2',
      JOBS_POLL_MS: '100',
      ...backendEnv(),
      ...extra,
    };
  };

  beforeAll(async () => {
    const keyDir = tempDir('multi-process-key');
    dirs.push(keyDir);
    keyFile = path.join(keyDir, 'key.json');
    const { privateKey } = crypto.generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    fs.writeFileSync(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        private_key: privateKey,
        client_email: 'exports@tiergraph-test.iam.gserviceaccount.com',
      }),
    );
    // A bucket of this test's own: run ids start at 1 in every fresh backend.
    gcs = new GcsBlobStore({ bucket, projectId: 'tiergraph-test' });
    await gcs.storage.createBucket(bucket);
    // One after another: Agenda's PostgreSQL backend creates its tables and indexes
    // with IF NOT EXISTS, which PostgreSQL does not make safe against a concurrent twin.
    apiA = await startProcess(env({ JOBS_WORKER: 'false' }), logs);
    apiB = await startProcess(env({ JOBS_WORKER: 'false' }), logs);
    // Slowed, so that it is still exporting when it is killed.
    worker = await startProcess(env({ JOBS_WORKER: 'true', TEST_SLOW_WALK_MS: '1500' }), logs);
  });

  afterAll(async () => {
    await Promise.all([stopProcess(apiA), stopProcess(apiB), stopProcess(worker, 'SIGKILL')]);
    await gcs?.deleteOlderThan(new Date(Date.now() + 3600_000)).catch(() => 0);
    await gcs?.bucket.delete().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('shares runs between API processes and finishes a run whose worker was killed mid-export, once', async () => {
    const request = {
      root_nodes: 'boeing',
      num_tiers: '3',
      direction: 'supplier',
      output_multiple_tables: 'no',
    };
    const r1 = Number((await call(apiA!, 'POST', '/v1/tierviewjob/', request)).run_id);
    const r2 = Number((await call(apiB!, 'POST', '/v1/tierviewjob/', request)).run_id);
    expect(r2).not.toBe(r1);
    // Each run is visible from the other API process.
    expect((await call(apiB!, 'GET', `/v1/jobs/${r1}`)).run_id).toEqual(String(r1));
    expect((await call(apiA!, 'GET', `/v1/jobs/${r2}`)).run_id).toEqual(String(r2));

    // The worker takes r1 and is killed while it exports.
    await until(
      `run ${r1} is RUNNING`,
      async () => lifeCycle(await call(apiB!, 'GET', `/v1/jobs/${r1}`)) === 'RUNNING',
    );
    await stopProcess(worker, 'SIGKILL');
    const stranded = await call(apiA!, 'GET', `/v1/jobs/${r1}`);
    expect(lifeCycle(stranded)).toBe('RUNNING');

    // Another worker takes over once the dead one's lock expires.
    worker = await startProcess(env({ JOBS_WORKER: 'true' }), logs);
    const ended: Json[] = [];
    for (const id of [r1, r2]) {
      await until(
        `run ${id} ends`,
        async () => lifeCycle(await call(apiA!, 'GET', `/v1/jobs/${id}`)) === 'TERMINATED',
      );
      ended.push(await call(apiB!, 'GET', `/v1/jobs/${id}`));
    }
    expect(ended.map((v) => [(v.state as Json).result_state, (v.state as Json).state_message])).toEqual([
      ['SUCCESS', ''],
      ['SUCCESS', ''],
    ]);

    for (const [i, id] of [r1, r2].entries()) {
      // Complete files: header and the five relationships of boeing's three supplier tiers.
      const link = (JSON.parse(String((ended[i]!.output as Json).result)) as Record<string, string>)
        .tierview_file!;
      const csv = await (await fetch(link)).text();
      expect(csv.split('\r\n').filter((l) => l !== '')).toHaveLength(6);
      // Nothing else under the run: no second copy, no partial upload.
      const [files] = await gcs.bucket.getFiles({ prefix: `exports/runs/${id}/` });
      expect(files.map((f) => f.name)).toEqual([`exports/runs/${id}/tierview-${id}.csv`]);
    }

    // Once: past another lock period nobody runs it again, and the file is not rewritten.
    const [before] = await gcs.bucket.file(`exports/runs/${r1}/tierview-${r1}.csv`).getMetadata();
    await new Promise((r) => setTimeout(r, 3_000));
    const [after] = await gcs.bucket.file(`exports/runs/${r1}/tierview-${r1}.csv`).getMetadata();
    expect(after.generation).toEqual(before.generation);
    expect((await call(apiA!, 'GET', `/v1/jobs/${r1}`)).state).toEqual(ended[0]!.state);
  });
}

const mongoUrl = EMULATOR === '' ? null : testMongoUrl();
const postgresUrl = EMULATOR === '' ? null : testPostgresUrl();
const skipReason = (hint: string) => (EMULATOR === '' ? GCS_HINT : hint);

describeWithService('several processes, one queue: MongoDB wire', mongoUrl, skipReason(MONGO_HINT), (url) => {
  const dbName = `tiergraph_test_mp_${crypto.randomBytes(5).toString('hex')}`;
  afterAll(async () => {
    const client = new MongoClient(url);
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  });
  scenario(() => {
    const u = new URL(url);
    u.pathname = `/${dbName}`;
    return { JOBS_BACKEND: 'mongodb', MONGODB_URI: u.toString() };
  });
});

describeWithService(
  'several processes, one queue: PostgreSQL',
  postgresUrl,
  skipReason(POSTGRES_HINT),
  (url) => {
    // A schema of its own, so that other suites on the same database cannot touch its tables.
    const schema = `tg_mp_${crypto.randomBytes(5).toString('hex')}`;
    beforeAll(async () => {
      const pool = new Pool({ connectionString: url });
      try {
        await pool.query(`CREATE SCHEMA ${schema}`);
      } finally {
        await pool.end();
      }
    });
    afterAll(async () => {
      const pool = new Pool({ connectionString: url });
      try {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await pool.end();
      }
    });
    scenario(() => {
      const u = new URL(url);
      u.searchParams.set('options', `-c search_path=${schema}`);
      return { JOBS_BACKEND: 'postgres', POSTGRES_URL: u.toString() };
    });
  },
);

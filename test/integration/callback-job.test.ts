import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { MongoClient } from 'mongodb';
import { Pool } from 'pg';
import { Redis } from 'ioredis';
import { parseCallbackHosts } from '../../src/domain/callback-hosts';
import { isPublicAddress } from '../../src/domain/public-address';
import type { TierViewRequest } from '../../src/domain/tierview';
import { callbackDeliveryId } from '../../src/jobs/callback.job';
import { CALLBACK_DELIVERY_HEADER, CallbackSender } from '../../src/jobs/callbacks';
import type { CallbackSenderOptions } from '../../src/jobs/callbacks';
import type { JobQueueOptions } from '../../src/jobs/job-queue';
import type { RunRecord } from '../../src/jobs/run-store';
import { CallbackReceiver } from '../support/callback-receiver';
import type { ReceivedCallback } from '../support/callback-receiver';
import { makeCallbackQueue } from '../support/callback-queue';
import { ROOT, tempDir } from '../support/paths';
import {
  MONGO_HINT,
  POSTGRES_HINT,
  REDIS_HINT,
  describeWithService,
  testMongoUrl,
  testPostgresUrl,
  testRedisUrl,
} from '../support/services';

const SECRET = 'callback-secret-0123456789abcdef0123';

const request = (callbackUrl: string): TierViewRequest => ({
  root_nodes: 'boeing',
  num_tiers: 1,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: callbackUrl,
});

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger that keeps its lines for the test to read. */
function memoryLog(): { log: JobQueueOptions['log']; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n'))
        if (text) lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

const callbacksTo = (hosts: string, options: Partial<CallbackSenderOptions>) => ({
  rules: parseCallbackHosts(hosts),
  allowHttp: true,
  sender: new CallbackSender({ secret: SECRET, timeoutMs: 2000, ...options }),
});

const deliveryId = (r: ReceivedCallback) => r.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What every jobs engine must do with a callback whose receiver failed once. */
function survivesRestart(engineSettings: () => Record<string, string>, reset: () => Promise<void>): void {
  let receiver: CallbackReceiver;
  let url: string;
  beforeEach(async () => {
    await reset();
    receiver = new CallbackReceiver();
    url = await receiver.start();
  });
  afterEach(() => receiver.stop());

  it('delivers after the queue closed mid-retry and another started, with the same delivery id, on schedule', async () => {
    const dir = tempDir('callback-job');
    receiver.answer = (i) => (i === 0 ? 503 : 204);
    // Retries wait between half and all of 1.5 s.
    const schedule = { baseDelayMs: 1500, maxDelayMs: 1500 };
    const first = makeCallbackQueue(dir, engineSettings(), { callbacks: callbacksTo('127.0.0.1', schedule) });
    await first.queue.start();
    let runId: number;
    try {
      runId = (await first.queue.submit(request(url))).runId;
      await receiver.waitFor(1);
    } finally {
      await first.queue.close();
      await first.engine.close();
    }
    const second = makeCallbackQueue(dir, engineSettings(), {
      callbacks: callbacksTo('127.0.0.1', schedule),
    });
    await second.queue.start();
    try {
      const [failed, delivered] = await receiver.waitFor(2);
      expect(deliveryId(delivered!)).toBe(deliveryId(failed!));
      expect(deliveryId(delivered!)).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(delivered!.body)).toMatchObject({
        run_id: String(second.queue.publicRunId(runId)),
        state: { life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' },
      });
      expect(delivered!.at - failed!.at).toBeGreaterThanOrEqual(700);
      await sleep(500);
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await second.queue.close();
      await second.engine.close();
    }
  });

  it('delivers the callback of a run that ended in a process that died before queuing it, once', async () => {
    const dir = tempDir('callback-owed');
    const callbacks = () => callbacksTo('127.0.0.1', { baseDelayMs: 200, maxDelayMs: 200 });
    // What a process leaves when it dies between the transition that ends a run and
    // queuing its callback: the run ended and marked, no delivery queued.
    const dead = makeCallbackQueue(dir, engineSettings(), { callbacks: callbacks() });
    let run: RunRecord | null;
    try {
      // Its queue connects on construction; let it finish before the engine closes.
      await dead.queue.agenda.ready;
      await dead.engine.runs.open();
      const created = await dead.engine.runs.create(request(url), new Date(Date.now() - 120_000));
      run = await dead.engine.runs.transition(
        created.runId,
        ['PENDING'],
        { lifeCycleState: 'TERMINATED', resultState: 'SUCCESS', files: {}, callbackDue: true },
        new Date(Date.now() - 60_000),
      );
      expect(run?.callbackDue).toBe(true);
    } finally {
      await dead.engine.runs.close();
      await dead.engine.close();
    }
    const next = makeCallbackQueue(dir, engineSettings(), { callbacks: callbacks() });
    await next.queue.start();
    try {
      const [delivered] = await receiver.waitFor(1);
      expect(JSON.parse(delivered!.body)).toMatchObject({
        run_id: String(next.queue.publicRunId(run!.runId)),
        state: { life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' },
      });
      // Made from the id the client knows, never the stored number (which the hash would give away).
      expect(deliveryId(delivered!)).toBe(
        callbackDeliveryId(next.queue.publicRunId(run!.runId), run!.createdAt),
      );
      expect(deliveryId(delivered!)).not.toBe(callbackDeliveryId(run!.runId, run!.createdAt));
      await sleep(300);
      expect((await next.engine.runs.get(run!.runId))?.callbackDue).toBe(false);
    } finally {
      await next.queue.close();
      await next.engine.close();
    }
    // Queued and cleared: the worker after it has nothing more to send.
    const after = makeCallbackQueue(dir, engineSettings(), { callbacks: callbacks() });
    await after.queue.start();
    try {
      await sleep(700);
      expect(receiver.requests).toHaveLength(1);
    } finally {
      await after.queue.close();
      await after.engine.close();
    }
  });
}

describe('callback job on the embedded jobs engine', () => {
  survivesRestart(
    () => ({}),
    () => Promise.resolve(),
  );

  let receiver: CallbackReceiver;
  let url: string;
  beforeEach(async () => {
    receiver = new CallbackReceiver();
    url = await receiver.start();
  });
  afterEach(() => receiver.stop());

  /** Starts a worker process that queues a run with a callback to `url`; resolves once the run exists. */
  async function crashingWorker(dir: string): Promise<ChildProcessWithoutNullStreams> {
    const child = spawn(process.execPath, [
      '-r',
      path.join(ROOT, 'test/support/ts-register.js'),
      path.join(ROOT, 'test/support/callback-crash.child.ts'),
      dir,
      url,
      '{}',
    ]);
    child.stderr.pipe(process.stderr);
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (/run \d+/.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${out}`)));
    });
    return child;
  }

  async function kill(child: ChildProcessWithoutNullStreams): Promise<void> {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  it('delivers after the worker was killed while waiting to retry, with the same delivery id', async () => {
    const dir = tempDir('callback-job');
    receiver.answer = (i) => (i === 0 ? 503 : 204);
    const child = await crashingWorker(dir);
    await receiver.waitFor(1);
    // Time for the failed attempt to be recorded, but not for the retry 1 s later.
    await sleep(300);
    await kill(child);
    expect(receiver.requests).toHaveLength(1);
    const { queue, engine } = makeCallbackQueue(dir, {}, { callbacks: callbacksTo('127.0.0.1', {}) });
    await queue.start();
    try {
      const [failed, delivered] = await receiver.waitFor(2);
      expect(deliveryId(delivered!)).toBe(deliveryId(failed!));
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('delivers after the worker was killed during an attempt, with the same delivery id', async () => {
    const dir = tempDir('callback-job');
    // The first attempt gets no answer; the worker dies while it waits for one.
    receiver.answer = (i) => (i === 0 ? null : 204);
    const child = await crashingWorker(dir);
    await receiver.waitFor(1);
    await kill(child);
    const { queue, engine } = makeCallbackQueue(dir, {}, { callbacks: callbacksTo('127.0.0.1', {}) });
    await queue.start();
    try {
      const [lost, delivered] = await receiver.waitFor(2);
      expect(deliveryId(delivered!)).toBe(deliveryId(lost!));
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('retries on its schedule, then gives up with a warning and no error', async () => {
    const dir = tempDir('callback-job');
    receiver.answer = () => 503;
    const { log, lines } = memoryLog();
    const { queue, engine } = makeCallbackQueue(
      dir,
      {},
      {
        log,
        callbacks: callbacksTo('127.0.0.1', { maxAttempts: 3, baseDelayMs: 600, maxDelayMs: 1000 }),
      },
    );
    await queue.start();
    try {
      await queue.submit(request(url));
      const attempts = await receiver.waitFor(3);
      // Waits: between 300 and 600 ms, then between 500 and 1000 ms (capped), plus polling.
      const gaps = [attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at];
      expect(gaps[0]).toBeGreaterThanOrEqual(280);
      expect(gaps[0]).toBeLessThan(600 + 900);
      expect(gaps[1]).toBeGreaterThanOrEqual(480);
      expect(gaps[1]).toBeLessThan(1000 + 900);
      expect(new Set(attempts.map(deliveryId)).size).toBe(1);
      await sleep(2500);
      expect(receiver.requests).toHaveLength(3);
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 40, msg: 'callback not delivered; giving up', attempts: 3 }),
      );
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('stops at a refusal (4xx) with one attempt and a warning', async () => {
    const dir = tempDir('callback-job');
    receiver.answer = () => 410;
    const { log, lines } = memoryLog();
    const { queue, engine } = makeCallbackQueue(
      dir,
      {},
      {
        log,
        callbacks: callbacksTo('127.0.0.1', { baseDelayMs: 100, maxDelayMs: 100 }),
      },
    );
    await queue.start();
    try {
      await queue.submit(request(url));
      await receiver.waitFor(1);
      await sleep(1000);
      expect(receiver.requests).toHaveLength(1);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'callback refused by receiver; not retrying',
          status: 410,
        }),
      );
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it("a revoked key's runs: one not started yet is canceled without a callback, and a callback owed is not sent again", async () => {
    const dir = tempDir('callback-revoked');
    const revoked = new Set<string>(['key-gone']);
    const { log, lines } = memoryLog();
    // The receiver fails the first delivery, so the next attempt comes after the key is revoked.
    receiver.answer = (n) => (n === 0 ? 503 : 200);
    const { queue, engine } = makeCallbackQueue(
      dir,
      {},
      {
        log,
        callbacks: callbacksTo('127.0.0.1', { baseDelayMs: 500, maxDelayMs: 500 }),
        revokedKey: (id) => revoked.has(id),
      },
    );
    await queue.start();
    try {
      const gone = await queue.submit(request(url), 'key-gone');
      const late = await queue.submit(request(url), 'key-late');
      await receiver.waitFor(1);
      revoked.add('key-late');
      let view = await queue.view(gone.runId, 'key-gone');
      for (let i = 0; i < 100 && view.state.life_cycle_state !== 'TERMINATED'; i++) {
        await sleep(100);
        view = await queue.view(gone.runId, 'key-gone');
      }
      expect(view.state).toMatchObject({
        life_cycle_state: 'TERMINATED',
        result_state: 'CANCELED',
        state_message: 'canceled: the API key that started it was revoked',
      });
      await sleep(2000);
      // One delivery, the failed one of the run that ended before its key was revoked.
      expect(receiver.requests).toHaveLength(1);
      expect(JSON.parse(receiver.requests[0]!.body) as { run_id: string }).toMatchObject({
        run_id: String(queue.publicRunId(late.runId)),
      });
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: 'callback not sent: the run no longer exists, or its API key was revoked',
        }),
      );
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('posts to public addresses only when told to: refuses a private address at once and a name resolving to one when it delivers', async () => {
    const dir = tempDir('callback-job');
    const { log, lines } = memoryLog();
    const { queue, engine } = makeCallbackQueue(
      dir,
      {},
      {
        log,
        callbacks: {
          ...callbacksTo('127.0.0.1, localhost', { addresses: isPublicAddress }),
          publicOnly: true,
        },
      },
    );
    await queue.start();
    try {
      await expect(queue.submit(request(url))).rejects.toMatchObject({
        code: 'BAD_REQUEST',
        fieldErrors: [
          { field: 'callback_url', reason: expect.stringMatching(/is not a public address/) as string },
        ],
      });
      const named = new URL(url);
      named.hostname = 'localhost';
      const run = await queue.submit(request(named.href));
      for (let i = 0; i < 100 && !lines.some((l) => l.msg.startsWith('callback not sent')); i++)
        await sleep(100);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'callback not sent: its host resolves to an address callbacks may not reach',
          // The log names a run as its clients know it.
          run_id: queue.publicRunId(run.runId),
          status: null,
          err: expect.stringMatching(
            /^localhost resolves to (127\.0\.0\.1|::1), which callbacks may not reach/,
          ) as string,
        }),
      );
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('checks the host allow-list again when it delivers', async () => {
    const dir = tempDir('callback-job');
    receiver.answer = () => 503;
    const schedule = { baseDelayMs: 400, maxDelayMs: 400 };
    const first = makeCallbackQueue(dir, {}, { callbacks: callbacksTo('127.0.0.1', schedule) });
    await first.queue.start();
    try {
      await first.queue.submit(request(url));
      await receiver.waitFor(1);
    } finally {
      await first.queue.close();
      await first.engine.close();
    }
    // The operator has since taken the host off the list.
    const { log, lines } = memoryLog();
    const second = makeCallbackQueue(dir, {}, { log, callbacks: callbacksTo('hooks.example.com', schedule) });
    await second.queue.start();
    try {
      await sleep(1500);
      expect(receiver.requests).toHaveLength(1);
      expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'callback not sent' }));
    } finally {
      await second.queue.close();
      await second.engine.close();
    }
  });
});

describeWithService('callback job on PostgreSQL', testPostgresUrl(), POSTGRES_HINT, (url) =>
  survivesRestart(
    () => ({ JOBS_BACKEND: 'postgres', POSTGRES_URL: url }),
    async () => {
      const pool = new Pool({ connectionString: url });
      try {
        await pool.query('DROP TABLE IF EXISTS tiergraph_jobs, tiergraph_runs');
      } finally {
        await pool.end();
      }
    },
  ),
);

describeWithService('callback job on Redis', testRedisUrl(), REDIS_HINT, (url) =>
  survivesRestart(
    () => ({ JOBS_BACKEND: 'redis', REDIS_URL: url }),
    async () => {
      const redis = new Redis(url);
      try {
        for (const pattern of ['tiergraph:jobs:*', 'tiergraph:runs:*']) {
          const keys = await redis.keys(pattern);
          if (keys.length > 0) await redis.del(...keys);
        }
      } finally {
        await redis.quit();
      }
    },
  ),
);

describeWithService('callback job on MongoDB', testMongoUrl(), MONGO_HINT, (url) =>
  survivesRestart(
    () => ({ JOBS_BACKEND: 'mongodb', MONGODB_URI: url }),
    async () => {
      const client = new MongoClient(url);
      try {
        // Only deliveries a stopped test left behind; the runs keep counting up.
        await client.db().collection('tiergraph_jobs').deleteMany({ name: 'callback' });
      } finally {
        await client.close();
      }
    },
  ),
);

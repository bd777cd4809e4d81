import http from 'node:http';
import { Readable } from 'node:stream';
import type { LocalBlobStore } from '../../src/blobs/local/local.blob-store';
import { parseCallbackHosts } from '../../src/domain/callback-hosts';
import {
  CALLBACK_SIGNATURE_HEADER,
  CallbackSender,
  keyCallbackSecret,
  verifyCallbackSignature,
} from '../../src/jobs/callbacks';
import type { TierViewRequest } from '../../src/domain/tierview';
import type { JobView } from '../../src/jobs/job-queue';
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';
import BetterSqlite3 from 'better-sqlite3';
import { jobsFile, makeQueue } from '../support/job-queue-harness';
import { recordingLogger } from '../support/server';
import { tempDir } from '../support/paths';

const request: TierViewRequest = {
  root_nodes: 'boeing',
  num_tiers: 3,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
};

const exists = { companyExists: () => Promise.resolve(true) } as unknown as GraphStore;

/** An export that reports `steps` of progress, 50 ms apart, and then waits until it is aborted. */
const reportingUntilAborted = (...steps: unknown[]) =>
  ({
    export: async (
      _id: number,
      _attempt: string,
      _r: unknown,
      onProgress: (p: unknown) => void,
      signal: AbortSignal,
    ) => {
      for (const [i, step] of steps.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 50));
        onProgress(step);
      }
      return new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    },
  }) as unknown as TierViewService;

/** An export that stores one small file and succeeds. */
const writingOneFile = (blobs: LocalBlobStore) =>
  ({
    export: async () => {
      await blobs.put('runs/x/a/tierview.csv', Readable.from(['a,b\n']), 'text/csv');
      return {
        files: { tierview_file: 'runs/x/a/tierview.csv' },
        companies: 1,
        rows: 1,
        bytes: 4,
        dropped: {},
      };
    },
  }) as unknown as TierViewService;

const untilAborted = reportingUntilAborted({
  phase: 'relationships',
  tier: 1,
  tiers: 3,
  companies: 10,
  rows: 5,
});

/** Rows of jobs named `name` left in the embedded queue's table, once they have had 5 s to go. */
async function queueRowsLeft(dir: string, name: string): Promise<number> {
  const db = new BetterSqlite3(jobsFile(dir), { readonly: true });
  try {
    const count = () =>
      (db.prepare('SELECT count(*) AS n FROM agenda_jobs WHERE name = ?').get(name) as { n: number }).n;
    for (let i = 0; i < 50 && count() > 0; i++) await new Promise((r) => setTimeout(r, 100));
    return count();
  } finally {
    db.close();
  }
}

async function until(
  view: () => Promise<JobView>,
  ok: (v: JobView) => boolean,
  ms = 20_000,
): Promise<JobView> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await view();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`state not reached: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('job queue', () => {
  it('cancels a running export: TERMINATED, CANCELED, user_cancelled_or_timedout', async () => {
    const dir = tempDir('jobs');
    const { queue, engine } = makeQueue(dir, exists, untilAborted);
    await queue.start();
    try {
      const run = await queue.submit(request);
      await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'RUNNING',
      );
      expect((await queue.view(run.runId)).output).toEqual({});
      await queue.cancel(run.runId);
      const end = await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
      );
      expect(end).toEqual({
        run_id: String(queue.publicRunId(run.runId)),
        state: {
          life_cycle_state: 'TERMINATED',
          result_state: 'CANCELED',
          state_message: 'canceled by the user',
          user_cancelled_or_timedout: true,
        },
        output: null,
      });
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('starts a run posted in the same process at once, not at the next poll', async () => {
    const dir = tempDir('jobs');
    const done = {
      export: () => Promise.resolve({ files: {}, companies: 1, rows: 0, bytes: 0, dropped: {} }),
    } as unknown as TierViewService;
    // A poll so slow that only the wake can start the run within the wait below.
    const { queue, engine } = makeQueue(dir, exists, done, { pollMs: 60_000 });
    await queue.start();
    try {
      // Past the scan made at start.
      await new Promise((r) => setTimeout(r, 300));
      const run = await queue.submit(request);
      const end = await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
        10_000,
      );
      expect(end.state.result_state).toBe('SUCCESS');
      // The run store keeps the run; the queue keeps no row for it once it is over.
      expect(await queueRowsLeft(dir, 'tierview')).toBe(0);
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('shows the latest progress of a run, not only the first of each second', async () => {
    const dir = tempDir('jobs');
    const twoSteps = reportingUntilAborted(
      { phase: 'companies', tier: 0, tiers: 3, companies: 0, rows: 0 },
      { phase: 'relationships', tier: 2, tiers: 3, companies: 120, rows: 340 },
    );
    const { queue, engine } = makeQueue(dir, exists, twoSteps);
    await queue.start();
    try {
      const run = await queue.submit(request);
      const latest = await until(
        () => queue.view(run.runId),
        (v) => v.state.state_message.startsWith('tier 2'),
        5000,
      );
      expect(latest.state).toEqual(
        expect.objectContaining({
          life_cycle_state: 'RUNNING',
          state_message: 'tier 2 of 3: 120 companies, 340 relationships written',
        }),
      );
      await queue.cancel(run.runId);
      await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
      );
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('starts the next queued run as soon as one ends, not at the next poll', async () => {
    const dir = tempDir('jobs');
    const done = {
      export: () => Promise.resolve({ files: {}, companies: 1, rows: 0, bytes: 0, dropped: {} }),
    } as unknown as TierViewService;
    // One run at a time, and a poll so slow that only a wake can start the queued ones in time.
    const { queue, engine } = makeQueue(dir, exists, done, { pollMs: 60_000, concurrency: 1 });
    await queue.start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      const runs = await Promise.all([1, 2, 3, 4].map(() => queue.submit(request)));
      for (const run of runs) {
        const end = await until(
          () => queue.view(run.runId),
          (v) => v.state.life_cycle_state === 'TERMINATED',
          10_000,
        );
        expect([run.runId, end.state.result_state]).toEqual([run.runId, 'SUCCESS']);
      }
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('ends an export that runs past the time limit TIMEDOUT', async () => {
    const dir = tempDir('jobs');
    const { queue, engine } = makeQueue(dir, exists, untilAborted, { timeoutS: 1 });
    await queue.start();
    try {
      const run = await queue.submit(request);
      const end = await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
      );
      expect(end.state).toEqual({
        life_cycle_state: 'TERMINATED',
        result_state: 'TIMEDOUT',
        state_message: 'stopped after the time limit of 1 s',
        user_cancelled_or_timedout: true,
      });
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('posts a signed completion callback to an allowed host when the run ends', async () => {
    const secret = 'callback-secret-0123456789abcdef0123';
    const received: { body: string; signature: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ body, signature: String(req.headers[CALLBACK_SIGNATURE_HEADER.toLowerCase()]) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const dir = tempDir('jobs');
    const { queue, engine } = makeQueue(dir, exists, untilAborted, {
      timeoutS: 1,
      callbacks: {
        rules: parseCallbackHosts('127.0.0.1'),
        allowHttp: true,
        sender: new CallbackSender({ secret, baseDelayMs: 10 }),
      },
    });
    await queue.start();
    try {
      await expect(
        queue.submit({ ...request, callback_url: 'http://elsewhere.example/hook' }),
      ).rejects.toMatchObject({
        code: 'BAD_REQUEST',
      });
      const run = await queue.submit({ ...request, callback_url: `http://127.0.0.1:${port}/hook` }, 'key-a');
      for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(received).toHaveLength(1);
      const { body, signature } = received[0]!;
      const now = Math.floor(Date.now() / 1000);
      expect(verifyCallbackSignature(secret, signature, body, now)).toBe(true);
      // Its key's holder verifies it with the key's own secret; another key's holder cannot.
      expect(verifyCallbackSignature(keyCallbackSecret(secret, 'key-a'), signature, body, now)).toBe(true);
      expect(verifyCallbackSignature(keyCallbackSecret(secret, 'key-b'), signature, body, now)).toBe(false);
      // The server's signature last, where a receiver that reads one v1 only finds it.
      const last = signature.slice(signature.lastIndexOf(',') + 1);
      expect(
        verifyCallbackSignature(secret, `t=${signature.split(',')[0]!.slice(2)},${last}`, body, now),
      ).toBe(true);
      expect(JSON.parse(body)).toMatchObject({
        run_id: String(queue.publicRunId(run.runId)),
        state: { life_cycle_state: 'TERMINATED', result_state: 'TIMEDOUT', user_cancelled_or_timedout: true },
      });
      expect(await queueRowsLeft(dir, 'callback')).toBe(0);
    } finally {
      await queue.close();
      await engine.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("signs no download link past the files' retention, and says when they expired", async () => {
    const dir = tempDir('jobs-retention');
    let shift = 0;
    const { queue, engine } = makeQueue(dir, exists, writingOneFile, {
      retentionS: 3600,
      downloadTtlS: 3600,
      now: () => new Date(Date.now() + shift),
    });
    await queue.start();
    try {
      const run = await queue.submit(request);
      const ended = await until(
        () => queue.view(run.runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
      );
      expect(ended.state.result_state).toBe('SUCCESS');
      const expiresIn = async () => {
        const out = (await queue.view(run.runId)).output as { result: string };
        const link = new URL((JSON.parse(out.result) as Record<string, string>).tierview_file!);
        return Number(link.searchParams.get('expires')) - Date.now() / 1000;
      };
      // A full link's lifetime while the files have longer.
      expect(await expiresIn()).toBeGreaterThan(3500);
      // 100 s of the files' hour left: the link lives no longer.
      shift = 3500 * 1000;
      const left = await expiresIn();
      expect(left).toBeGreaterThan(90);
      expect(left).toBeLessThanOrEqual(101);
      shift = 3601 * 1000;
      const gone = await queue.view(run.runId);
      expect(gone.output).toBeNull();
      expect(gone.state.state_message).toMatch(
        /^the export files expired on \S+ \(EXPORT_RETENTION_S after the run ended\); start a new run$/,
      );
    } finally {
      await queue.close();
      await engine.close();
    }
  });

  it('signs no link to files removed before their time: a clean-up under a shorter retention, then a longer one', async () => {
    const dir = tempDir('jobs-retention-raised');
    const first = makeQueue(dir, exists, writingOneFile, { retentionS: 60 });
    let runId: number;
    await first.queue.start();
    try {
      runId = (await first.queue.submit(request)).runId;
      const ended = await until(
        () => first.queue.view(runId),
        (v) => v.state.life_cycle_state === 'TERMINATED',
      );
      expect(ended.state.result_state).toBe('SUCCESS');
      expect(JSON.parse((ended.output as { result: string }).result)).toHaveProperty('tierview_file');
      // What the clean-up does once the minute has passed.
      expect(await first.blobs.deleteOlderThan(new Date(Date.now() + 61_000))).toBe(1);
    } finally {
      await first.queue.close();
      await first.engine.close();
    }
    // The server comes back keeping files a day: the run's day has not passed, but its files are gone.
    const second = makeQueue(dir, exists, writingOneFile, { retentionS: 86_400 });
    await second.queue.start();
    try {
      const view = await second.queue.view(runId);
      expect(view.state.result_state).toBe('SUCCESS');
      expect(view.output).toBeNull();
      expect(view.state.state_message).toMatch(
        /^the export files are no longer stored \(.*\); start a new run$/,
      );
      // The file back in place: the links are given again.
      await second.blobs.put('runs/x/a/tierview.csv', Readable.from(['a,b\n']), 'text/csv');
      expect((await second.queue.view(runId)).output).toMatchObject({ truncated: false });
    } finally {
      await second.queue.close();
      await second.engine.close();
    }
  });

  it('logs a failing queue database once a minute, not at every poll', async () => {
    const { log, lines } = recordingLogger();
    const { queue, engine } = makeQueue(tempDir('jobs-errors'), exists, untilAborted, { log });
    try {
      const agenda = (queue as unknown as { agenda: { emit(event: string, e: Error): boolean } }).agenda;
      for (let i = 0; i < 5; i++) agenda.emit('error', new Error('connection refused'));
      expect(lines.filter((l) => l.msg === 'job queue error')).toHaveLength(1);
    } finally {
      await queue.close();
      await engine.close();
    }
  });
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '../../src/domain/errors';
import type { GraphStore } from '../../src/store/graph-store';
import type { BlobStore } from '../../src/blobs/blob-store';
import type { LocalBlobStore } from '../../src/blobs/local/local.blob-store';
import { TierViewService } from '../../src/services/tierview.service';
import { DOWNLOAD_PREFIX } from '../../src/blobs/local/local.blob-store';
import type { TierViewRequest } from '../../src/domain/tierview';
import type { JobQueue, JobView } from '../../src/jobs/job-queue';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { CountingExport } from '../support/counting-export';
import { makeQueue } from '../support/job-queue-harness';
import type { RunStore } from '../../src/jobs/run-store';
import { ROOT, readSeed, tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

const request: TierViewRequest = {
  root_nodes: 'boeing',
  num_tiers: 3,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
};

const ended = (v: JobView) =>
  v.state.life_cycle_state === 'TERMINATED' || v.state.life_cycle_state === 'INTERNAL_ERROR';

async function untilEnded(queue: JobQueue, runId: number, ms = 60_000): Promise<JobView> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await queue.view(runId);
    if (ended(v)) return v;
    if (Date.now() > end) throw new Error(`run ${runId} did not end: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Follows each signed link of a finished run as the download route would; throws 410 GONE for a missing file. */
function download(blobs: LocalBlobStore, view: JobView): Record<string, string> {
  const out = view.output as { result: string };
  const links = JSON.parse(out.result) as Record<string, string>;
  const files: Record<string, string> = {};
  for (const [name, link] of Object.entries(links)) {
    const url = new URL(link);
    const key = url.pathname.slice(DOWNLOAD_PREFIX.length);
    const file = blobs.verify(key, url.searchParams.get('expires'), url.searchParams.get('signature'));
    files[name] = fs.readFileSync(file, 'utf8');
  }
  return files;
}

/** Data rows in a stable order: rows of one tier come in the engine's order. */
const sortedRows = (csv: string) =>
  csv
    .split('\r\n')
    .filter((l) => l !== '')
    .sort()
    .join('\n');

describe('exports take effect exactly once', () => {
  let dir: string;
  let store: EmbeddedGraphStore;
  beforeAll(async () => {
    dir = tempDir('exactly-once');
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 128 });
    await store.open();
    await store.runScript(splitStatements(readSeed('test-small.cypher')));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('30 runs at once, waiting longer than the lock lifetime: each exported once, every file downloads', async () => {
    let exporter: CountingExport | undefined;
    const { queue, engine, blobs } = makeQueue(
      dir,
      store,
      (b) => (exporter = new CountingExport(store, b, 250)),
      { concurrency: 2, lockS: 1, pollMs: 100 },
    );
    await queue.start();
    try {
      const runs = await Promise.all(Array.from({ length: 30 }, () => queue.submit(request)));
      const views = await Promise.all(runs.map((r) => untilEnded(queue, r.runId)));
      expect(views.map((v) => v.state.result_state)).toEqual(runs.map(() => 'SUCCESS'));
      const texts = views.map((v) => download(blobs, v).tierview_file!);
      // header and the five relationships of boeing's three supplier tiers, in every file
      expect(texts.map((t) => t.split('\r\n').filter((l) => l !== '').length)).toEqual(runs.map(() => 6));
      const twice = [...exporter!.calls].filter(([, n]) => n > 1).map(([id]) => id);
      expect(twice).toEqual([]);
    } finally {
      await queue.close();
      await engine.close();
    }
  }, 120_000);
  it('two workers on one queue: each run exported once, by one of them', async () => {
    const shared = tempDir('exactly-once-two');
    const exporters: CountingExport[] = [];
    const workers = [0, 1].map(() =>
      makeQueue(
        shared,
        store,
        (b) => {
          const e = new CountingExport(store, b, 150);
          exporters.push(e);
          return e;
        },
        { concurrency: 2, lockS: 1, pollMs: 100 },
      ),
    );
    for (const w of workers) await w.queue.start();
    const [a] = workers;
    try {
      const runs = await Promise.all(Array.from({ length: 20 }, () => a!.queue.submit(request)));
      const views = await Promise.all(runs.map((r) => untilEnded(a!.queue, r.runId)));
      expect(views.map((v) => v.state.result_state)).toEqual(runs.map(() => 'SUCCESS'));
      for (const v of views) expect(download(a!.blobs, v).tierview_file).toContain('boeing');
      // An export is named by the run's id as clients see it.
      const total = (id: number) =>
        exporters.reduce((n, e) => n + (e.calls.get(a!.queue.publicRunId(id)) ?? 0), 0);
      expect(runs.map((r) => total(r.runId))).toEqual(runs.map(() => 1));
      // Both took part.
      expect(exporters.every((e) => e.calls.size > 0)).toBe(true);
    } finally {
      for (const w of workers) await w.queue.close();
      for (const w of workers) await w.engine.close();
      fs.rmSync(shared, { recursive: true, force: true });
    }
  }, 120_000);

  it('kill -9 with runs running and queued: after a restart each ends SUCCESS once, files equal an uninterrupted run', async () => {
    const crashDir = tempDir('exactly-once-crash');
    // The rows an uninterrupted export of the same request writes.
    const reference = makeQueue(tempDir('exactly-once-ref'), store, (b) => new TierViewService(store, b));
    await reference.queue.start();
    let expected: string;
    try {
      const run = await reference.queue.submit(request);
      expected = sortedRows(
        download(reference.blobs, await untilEnded(reference.queue, run.runId)).tierview_file!,
      );
    } finally {
      await reference.queue.close();
      await reference.engine.close();
    }

    const child = spawn(
      process.execPath,
      [
        '-r',
        path.join(ROOT, 'test/support/ts-register.js'),
        path.join(ROOT, 'test/support/job-crash.child.ts'),
        crashDir,
        '8',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready') && /runs [\d,]+\n/.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${out}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const ids = /runs ([\d,]+)/.exec(out)![1]!.split(',').map(Number);

    let exporter: CountingExport | undefined;
    const { queue, engine, blobs } = makeQueue(
      crashDir,
      store,
      (b) => (exporter = new CountingExport(store, b, 400)),
      { concurrency: 2, lockS: 1, pollMs: 100 },
    );
    try {
      // What the crash left, read before the new worker (which starts runs at once) is up.
      await engine.runs.open();
      const before = await Promise.all(ids.map((id) => engine.runs.get(id)));
      expect(before.filter((r) => r?.lifeCycleState === 'RUNNING')).toHaveLength(2);
      expect(before.filter((r) => r?.lifeCycleState === 'PENDING')).toHaveLength(6);
      await queue.start();
      const views = await Promise.all(ids.map((id) => untilEnded(queue, id)));
      expect(views.map((v) => v.state.result_state)).toEqual(ids.map(() => 'SUCCESS'));
      for (const v of views) expect(sortedRows(download(blobs, v).tierview_file!)).toBe(expected);
      expect(ids.map((id) => exporter!.calls.get(queue.publicRunId(id)))).toEqual(ids.map(() => 1));
      // One attempt's files per run remain: the crashed attempts' partial files are gone.
      for (const id of ids) {
        const left = fs.readdirSync(path.join(blobs.root, 'runs', String(queue.publicRunId(id))), {
          recursive: true,
        });
        expect(left.filter((f) => String(f).endsWith('.csv') || String(f).endsWith('.partial'))).toHaveLength(
          1,
        );
      }
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(crashDir, { recursive: true, force: true });
    }
  }, 120_000);
  it('a run whose files would pass EXPORT_MAX_BYTES ends FAILED with a clear message and leaves no file', async () => {
    const budgetDir = tempDir('exactly-once-budget');
    const { queue, engine, blobs } = makeQueue(budgetDir, store, (b) => new TierViewService(store, b));
    // Room for the header and a row or two, not for the whole file: the write is stopped part-way.
    blobs.limitBytes(700);
    await queue.start();
    try {
      const run = await queue.submit(request);
      const end = await untilEnded(queue, run.runId);
      expect(end.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'FAILED' });
      expect(end.state.state_message).toContain('EXPORT_MAX_BYTES');
      const left = fs.readdirSync(path.join(blobs.root, 'runs'), { recursive: true });
      expect(left.filter((f) => /\.(csv|partial)$/.test(String(f)))).toEqual([]);
      // The budget came back: with room again, the same request succeeds.
      blobs.limitBytes(1_000_000);
      const again = await untilEnded(queue, (await queue.submit(request)).runId);
      expect(again.state.result_state).toBe('SUCCESS');
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(budgetDir, { recursive: true, force: true });
    }
  }, 60_000);
  it("a key whose files fill its share (EXPORT_MAX_BYTES_PER_KEY) is stopped, and another key's runs go on", async () => {
    const shareDir = tempDir('exactly-once-share');
    const { log, lines } = recordingLogger();
    const { queue, engine, blobs } = makeQueue(shareDir, store, (b) => new TierViewService(store, b), {
      log,
    });
    await queue.start();
    try {
      const first = await untilEnded(queue, (await queue.submit(request, 'key-a')).runId);
      expect(first.state.result_state).toBe('SUCCESS');
      const csv = fs
        .readdirSync(blobs.root, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.csv'));
      expect(csv).toHaveLength(1);
      const size = fs.statSync(path.join(blobs.root, csv[0]!)).size;
      // Room in all, and for one and a half such files per key; counted from the disk, as at a start.
      blobs.limitBytes(1_000_000, Math.floor(size * 1.5));
      const second = await untilEnded(queue, (await queue.submit(request, 'key-a')).runId);
      expect(second.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'FAILED' });
      expect(second.state.state_message).toContain(
        `its files would pass the disk share of one API key for exports (EXPORT_MAX_BYTES_PER_KEY, ${Math.floor(size * 1.5).toLocaleString('en-US')} bytes; this key's export files take`,
      );
      const other = await untilEnded(queue, (await queue.submit(request, 'key-b')).runId);
      expect(other.state.result_state).toBe('SUCCESS');
      // The operator learns of it, with the figures.
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: "tier view export stopped: the key's export files would pass EXPORT_MAX_BYTES_PER_KEY",
          key_id: 'key-a',
          max_bytes: Math.floor(size * 1.5),
        }),
      );
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(shareDir, { recursive: true, force: true });
    }
  }, 60_000);
  it('a run taken up after an outage longer than its time limit ends TIMEDOUT, saying the server was interrupted', async () => {
    const lateDir = tempDir('exactly-once-late');
    let exporter: CountingExport | undefined;
    const { queue, engine } = makeQueue(lateDir, store, (b) => (exporter = new CountingExport(store, b, 0)), {
      lockS: 1,
      pollMs: 100,
      timeoutS: 20,
    });
    try {
      // A worker started it a minute ago and died with it (its heartbeat as old): the server was down since.
      await engine.runs.open();
      const run = await queue.submit(request);
      const minuteAgo = new Date(Date.now() - 60_000);
      await engine.runs.transition(
        run.runId,
        ['PENDING'],
        {
          lifeCycleState: 'RUNNING',
          attemptId: 'dead',
          heartbeatAt: minuteAgo,
          attempts: 1,
          startedAt: minuteAgo,
        },
        minuteAgo,
      );
      await queue.start();
      const end = await untilEnded(queue, run.runId);
      expect(end.state).toMatchObject({
        life_cycle_state: 'TERMINATED',
        result_state: 'TIMEDOUT',
        user_cancelled_or_timedout: true,
        state_message:
          'stopped: the time limit of 20 s, counted from its first start, had passed when it was taken up again after an interrupted attempt (the server stopped while it ran); start it again',
      });
      expect(exporter!.calls.get(queue.publicRunId(run.runId)) ?? 0).toBeLessThanOrEqual(1);
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(lateDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a start of a run whose holder is alive backs off; once the holder is silent it takes over', async () => {
    const holdDir = tempDir('exactly-once-hold');
    let exporter: CountingExport | undefined;
    const { queue, engine, blobs } = makeQueue(
      holdDir,
      store,
      (b) => (exporter = new CountingExport(store, b, 0)),
      { concurrency: 2, lockS: 1, pollMs: 100 },
    );
    try {
      // Another process holds the run, with a fresh heartbeat, before this worker starts.
      await engine.runs.open();
      const run = await queue.submit(request);
      const held = await engine.runs.transition(
        run.runId,
        ['PENDING'],
        { lifeCycleState: 'RUNNING', attemptId: 'elsewhere', heartbeatAt: new Date(), attempts: 1 },
        new Date(),
      );
      expect(held?.attemptId).toBe('elsewhere');
      const keepAlive = setInterval(() => {
        void engine.runs.transition(run.runId, ['RUNNING'], { heartbeatAt: new Date() }, new Date(), {
          attemptId: 'elsewhere',
        });
      }, 200);
      await queue.start();
      await new Promise((r) => setTimeout(r, 2500));
      expect(exporter!.calls.get(queue.publicRunId(run.runId))).toBeUndefined();
      expect((await engine.runs.get(run.runId))?.attemptId).toBe('elsewhere');
      // The holder falls silent (it died): its heartbeat goes stale and this worker takes the run over.
      clearInterval(keepAlive);
      const end = await untilEnded(queue, run.runId);
      expect(end.state.result_state).toBe('SUCCESS');
      expect(exporter!.calls.get(queue.publicRunId(run.runId))).toBe(1);
      const after = await engine.runs.get(run.runId);
      expect(after?.attempts).toBe(2);
      expect(after?.attemptId).not.toBe('elsewhere');
      expect(Object.keys(after!.files!)).not.toHaveLength(0);
      expect(Object.values(after!.files!).every((k) => k.includes(`/${after!.attemptId}/`))).toBe(true);
      expect(download(blobs, end).tierview_file).toContain('boeing');
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(holdDir, { recursive: true, force: true });
    }
  }, 60_000);

  /**
   * The blob store, its uploads refused while `down()` says so as an unreachable Cloud Storage refuses
   * them (the client's error: a socket code, the body left unread).
   */
  function unreachableUploads(
    blobs: BlobStore,
    down: () => boolean,
  ): { blobs: BlobStore; refused: () => number } {
    let refused = 0;
    const wrapped = new Proxy(blobs, {
      get(target, name, receiver) {
        if (name === 'put')
          return (key: string, body: Readable, type: string) => {
            if (!down()) return target.put(key, body, type);
            refused++;
            body.destroy();
            return Promise.reject(
              Object.assign(
                new Error('request to http://127.0.0.1:1/upload failed, reason: connect ECONNREFUSED'),
                {
                  code: 'ECONNREFUSED',
                },
              ),
            );
          };
        const member = Reflect.get(target, name, receiver) as unknown;
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
      },
    });
    return { blobs: wrapped, refused: () => refused };
  }

  it('a file store away for longer than the tries of an error: the export waits for it and ends SUCCESS', async () => {
    const awayDir = tempDir('exactly-once-store-away');
    // Away for 6 s: an error's three tries, 1 s and 4 s apart, would all have met it.
    const until = Date.now() + 6000;
    let away: ReturnType<typeof unreachableUploads> | undefined;
    const { queue, engine, blobs } = makeQueue(awayDir, store, (b) => {
      away = unreachableUploads(b, () => Date.now() < until);
      return new TierViewService(store, away.blobs);
    });
    await queue.start();
    try {
      const { end, messages } = await messagesUntilEnded(queue, (await queue.submit(request)).runId);
      expect(end.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' });
      expect(away!.refused()).toBeGreaterThanOrEqual(3);
      expect(messages.some((m) => m.startsWith('waiting for the file store, which does not answer'))).toBe(
        true,
      );
      expect(download(blobs, end).tierview_file).toContain('boeing');
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(awayDir, { recursive: true, force: true });
    }
  }, 60_000);

  /** Every state_message a run shows until it ends, and its end. */
  async function messagesUntilEnded(
    queue: JobQueue,
    runId: number,
  ): Promise<{ end: JobView; messages: string[] }> {
    const messages = new Set<string>();
    let v = await queue.view(runId);
    for (; !ended(v); v = await queue.view(runId)) {
      if (v.state.state_message) messages.add(v.state.state_message);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { end: v, messages: [...messages] };
  }

  /** The graph store, its tier walks failing as an unreachable Neo4j makes them fail while `down()` says so. */
  function unreachableWalks(down: () => boolean, failure: () => AppError): GraphStore {
    return new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'walkTiers')
          return (...args: Parameters<GraphStore['walkTiers']>) =>
            down() ? Promise.reject(failure()) : target.walkTiers(...args);
        const member = Reflect.get(target, name, receiver) as unknown;
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
      },
    });
  }

  it('a graph database away for a while: the export waits for it and ends SUCCESS; a query over its time limit ends FAILED at once', async () => {
    const awayDir = tempDir('exactly-once-graph-away');
    const until = Date.now() + 6000;
    const outage = () =>
      new AppError('UNAVAILABLE', 'The graph database is unavailable; try again shortly.', [], 5);
    const { queue, engine, blobs } = makeQueue(
      awayDir,
      store,
      (b) =>
        new TierViewService(
          unreachableWalks(() => Date.now() < until, outage),
          b,
        ),
    );
    await queue.start();
    try {
      const { end, messages } = await messagesUntilEnded(queue, (await queue.submit(request)).runId);
      expect(end.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' });
      expect(
        messages.some((m) => m.startsWith('waiting for the graph database, which does not answer')),
      ).toBe(true);
      expect(download(blobs, end).tierview_file).toContain('boeing');
    } finally {
      await queue.close();
      await engine.close();
    }
    const slow = makeQueue(
      awayDir,
      store,
      (b) =>
        new TierViewService(
          unreachableWalks(
            () => true,
            () =>
              new AppError(
                'UNAVAILABLE',
                'The graph database did not answer in time; try again or narrow the request.',
              ),
          ),
          b,
        ),
    );
    await slow.queue.start();
    try {
      const started = Date.now();
      const end = await untilEnded(slow.queue, (await slow.queue.submit(request)).runId);
      expect(end.state).toMatchObject({
        life_cycle_state: 'TERMINATED',
        result_state: 'FAILED',
        state_message: 'The graph database did not answer in time; try again or narrow the request.',
      });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await slow.queue.close();
      await slow.engine.close();
      fs.rmSync(awayDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a file store away past the time limit: the run ends TIMEDOUT, saying since when it did not answer', async () => {
    const awayDir = tempDir('exactly-once-store-gone');
    const { queue, engine } = makeQueue(
      awayDir,
      store,
      (b) => new TierViewService(store, unreachableUploads(b, () => true).blobs),
      { timeoutS: 3 },
    );
    await queue.start();
    try {
      const end = await untilEnded(queue, (await queue.submit(request)).runId);
      expect(end.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'TIMEDOUT' });
      expect(end.state.state_message).toMatch(
        /^stopped after the time limit of 3 s; the file store had not answered since \d{4}-\d\d-\d\dT/,
      );
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(awayDir, { recursive: true, force: true });
    }
  }, 60_000);

  /**
   * A run store whose writes ending a run fail while `down()` says so (its database unreachable),
   * over the store the queue's engine opens.
   */
  function failingEnds(
    down: () => boolean,
    // 'after': the write is applied, and its answer lost.
    when: 'before' | 'after' = 'before',
  ): {
    runs: RunStore;
    attach: (real: RunStore) => void;
    refused: () => number;
  } {
    let real: RunStore | null = null;
    let refused = 0;
    const runs = new Proxy({} as RunStore, {
      get(_target, name: keyof RunStore) {
        if (name === 'transition')
          return (...args: Parameters<RunStore['transition']>) => {
            const ends =
              args[2].lifeCycleState === 'TERMINATED' || args[2].lifeCycleState === 'INTERNAL_ERROR';
            if (ends && down()) {
              refused++;
              const lost = () => Promise.reject(new Error('connection to the run store lost'));
              return when === 'before' ? lost() : real!.transition(...args).then(lost);
            }
            return real!.transition(...args);
          };
        const member = real![name] as unknown;
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(real) : member;
      },
    });
    return { runs, attach: (r) => (real = r), refused: () => refused };
  }

  it('a run store failing as the export ends: the end is recorded once it answers again', async () => {
    const outageDir = tempDir('exactly-once-outage');
    const until = Date.now() + 1500;
    const failing = failingEnds(() => Date.now() < until);
    const { queue, engine, blobs } = makeQueue(outageDir, store, (b) => new TierViewService(store, b), {
      concurrency: 1,
      lockS: 4,
      pollMs: 100,
      runs: failing.runs,
    });
    failing.attach(engine.runs);
    try {
      await queue.start();
      const run = await queue.submit(request);
      const end = await untilEnded(queue, run.runId);
      expect(failing.refused()).toBeGreaterThan(0);
      expect(end.state.result_state).toBe('SUCCESS');
      expect((await engine.runs.get(run.runId))?.attempts).toBe(1);
      expect(download(blobs, end).tierview_file).toContain('boeing');
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(outageDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a commit applied whose answer was lost: the run ends SUCCESS and keeps its files', async () => {
    const lostDir = tempDir('exactly-once-lost-answer');
    let first = true;
    const failing = failingEnds(() => {
      const now = first;
      first = false;
      return now;
    }, 'after');
    const { log, lines } = recordingLogger();
    const { queue, engine, blobs } = makeQueue(lostDir, store, (b) => new TierViewService(store, b), {
      concurrency: 1,
      lockS: 4,
      pollMs: 100,
      runs: failing.runs,
      log,
    });
    failing.attach(engine.runs);
    try {
      await queue.start();
      const run = await queue.submit(request);
      const end = await untilEnded(queue, run.runId);
      // The run shows its end as soon as the first write is applied; the attempt goes on until it
      // has retried it. Closing the queue waits for it.
      await queue.close();
      expect(failing.refused()).toBe(1);
      expect(end.state.result_state).toBe('SUCCESS');
      expect((await engine.runs.get(run.runId))?.attempts).toBe(1);
      expect(download(blobs, end).tierview_file).toContain('boeing');
      // Its own commit, not another attempt's takeover: nothing was dropped.
      expect(lines.map((l) => l.msg)).toContain('could not record the end of the run; trying again');
      expect(lines.map((l) => l.msg)).not.toContain(
        'export finished after another attempt took the run over; its files were dropped',
      );
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(lostDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("an outage outlasting the hold: the job comes back, a new attempt ends the run, the first one's files go", async () => {
    const outageDir = tempDir('exactly-once-long-outage');
    let exporter: CountingExport | undefined;
    const until = Date.now() + 3000;
    const failing = failingEnds(() => Date.now() < until);
    const { queue, engine, blobs } = makeQueue(
      outageDir,
      store,
      (b) => (exporter = new CountingExport(store, b, 0)),
      { concurrency: 1, lockS: 1, pollMs: 100, runs: failing.runs },
    );
    failing.attach(engine.runs);
    try {
      await queue.start();
      const run = await queue.submit(request);
      const end = await untilEnded(queue, run.runId);
      expect(end.state.result_state).toBe('SUCCESS');
      expect(exporter!.calls.get(queue.publicRunId(run.runId))).toBe(2);
      const after = await engine.runs.get(run.runId);
      expect(after?.attempts).toBe(2);
      expect(download(blobs, end).tierview_file).toContain('boeing');
      // Only the committed attempt's files are left under the run's directory.
      const runDir = path.join(outageDir, 'exports', 'runs', String(queue.publicRunId(run.runId)));
      const files = fs
        .readdirSync(runDir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.csv'));
      expect(files.length).toBeGreaterThan(0);
      expect(files.every((f) => f.startsWith(`${after!.attemptId}${path.sep}`))).toBe(true);
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(outageDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a cancel recorded by another process while the export runs ends the run CANCELED, not SUCCESS', async () => {
    const cancelDir = tempDir('exactly-once-cancel');
    // A heartbeat every 20 s: the flag is not learned from it within this export.
    const { queue, engine } = makeQueue(cancelDir, store, (b) => new CountingExport(store, b, 800), {
      concurrency: 1,
      lockS: 60,
      pollMs: 100,
    });
    try {
      await queue.start();
      const run = await queue.submit(request);
      for (
        const end = Date.now() + 20_000;
        (await engine.runs.get(run.runId))?.lifeCycleState !== 'RUNNING';
      ) {
        if (Date.now() > end) throw new Error('the run did not start');
        await new Promise((r) => setTimeout(r, 20));
      }
      // What another process's cancel writes (it cannot stop this process's export itself).
      await engine.runs.transition(run.runId, ['RUNNING'], { cancelRequested: true }, new Date());
      const end = await untilEnded(queue, run.runId);
      expect(end.state).toEqual({
        life_cycle_state: 'TERMINATED',
        result_state: 'CANCELED',
        state_message: 'canceled by the user',
        user_cancelled_or_timedout: true,
      });
      // The files the export wrote are removed.
      const runDir = path.join(cancelDir, 'exports', 'runs', String(queue.publicRunId(run.runId)));
      const left = fs.existsSync(runDir)
        ? fs.readdirSync(runDir, { recursive: true }).filter((f) => String(f).endsWith('.csv'))
        : [];
      expect(left).toEqual([]);
    } finally {
      await queue.close();
      await engine.close();
      fs.rmSync(cancelDir, { recursive: true, force: true });
    }
  }, 60_000);
});

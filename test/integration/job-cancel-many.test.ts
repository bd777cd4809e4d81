import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { TierViewRequest } from '../../src/domain/tierview';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { CountingExport } from '../support/counting-export';
import { makeQueue } from '../support/job-queue-harness';
import { readSeed, tempDir } from '../support/paths';

const request: TierViewRequest = {
  root_nodes: 'boeing',
  num_tiers: 3,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
};

describe('cancelling many queued runs', () => {
  it('cancels 100 queued runs without one error-level log line', async () => {
    const dir = tempDir('cancel-many');
    const store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 128 });
    await store.open();
    await store.runScript(splitStatements(readSeed('test-small.cypher')));
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n'))
          if (l) lines.push(JSON.parse(l) as { level: number; msg: string });
        cb();
      },
    });
    const { queue, engine } = makeQueue(dir, store, (b) => new CountingExport(store, b, 300), {
      log: pino({ level: 'info' }, sink),
      concurrency: 2,
      lockS: 2,
      pollMs: 50,
    });
    await queue.start();
    try {
      const runs = await Promise.all(Array.from({ length: 100 }, () => queue.submit(request)));
      await new Promise((r) => setTimeout(r, 200));
      const views = await Promise.all(runs.map((r) => queue.cancel(r.runId)));
      expect(views.filter((v) => v.state.result_state === 'CANCELED').length).toBeGreaterThanOrEqual(95);
      // Let the queue go through what was canceled.
      await new Promise((r) => setTimeout(r, 3000));
      // The log was recorded (an empty one would hide errors too).
      expect(lines.length).toBeGreaterThan(0);
      const errors = lines.filter((l) => l.level >= 50);
      expect(errors.map((l) => l.msg)).toEqual([]);
    } finally {
      await queue.close();
      await engine.close();
      await store.close();
    }
  }, 60_000);
});

import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory, stagingRoot } from '../../src/import/import-directory';
import { startServer } from '../../src/server';
import type { RunningServer } from '../../src/server';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import * as vidOffsets from '../../src/store/exported-vid-offsets';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { embeddedStore } from '../../src/store/open-store';
import type { Config } from '../../src/config/env';
import { appendRows, companyRow, csvColumn } from '../support/factories';
import { tempDir } from '../support/paths';
import { ERROR_LEVEL, recordingLogger, testConfig, TEST_KEY } from '../support/server';

/** The company named most often among `customers` (the customer_id column): the one with most suppliers. */
function mostSupplied(customers: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const vid of customers) counts.set(vid, (counts.get(vid) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

/**
 * An import into the DATA_DIR a server serves builds a new graph generation beside the live one and
 * switches to it; the server follows within seconds. Reads that arrive meanwhile are answered from
 * one generation or the other, never with an error, as they are by `tiergraph import` beside
 * `tiergraph serve`.
 */
describe('reads through a running server while imports replace its graph', () => {
  const { log, lines } = recordingLogger();
  let dir: string;
  let input: string;
  let config: Config;
  let running: RunningServer;
  let base: string;

  /** What `tiergraph import` does: a store of its own on the same DATA_DIR, closed afterwards. */
  const runImport = async () => {
    const store = embeddedStore(config, log, 1);
    try {
      await importDirectory(store, input, { workDir: stagingRoot(config.dataDir), log });
    } finally {
      await store.close();
    }
  };
  const get = (p: string) => fetch(`${base}${p}`, { headers: { 'X-SERVICE-KEY': TEST_KEY } });
  /** Whether the company only the second import adds is served, by its profile and by a search. */
  const servesLate = async () => {
    const profile = await get('/v1/companies/late-1/');
    if (
      profile.status !== 200 ||
      ((await profile.json()) as { name: string }).name !== 'Quillfeather Tooling GmbH'
    )
      return false;
    const found = (await (await get('/v1/companies/?name=Quillfeather')).json()) as {
      results?: { vid: string }[];
    };
    return (found.results ?? []).some((r) => r.vid === 'late-1');
  };

  beforeAll(async () => {
    dir = tempDir('import-while-serving');
    input = path.join(dir, 'dataset');
    await generateDataset({ companies: 400, seed: 7, outDir: input });
    // Every read goes to the engine: no read cache, no point-read file, no walk memory (they answer
    // from the generation served until the next one is open, and hid a moment without a graph).
    config = testConfig(path.join(dir, 'data'), {
      READ_CACHE_ENTRIES: '0',
      EMBEDDED_POINT_READS: 'false',
      EMBEDDED_WALK_MEMORY: 'false',
    });
    await runImport();
    running = await startServer(config, log);
    base = `http://127.0.0.1:${running.port}`;
    await running.searchReady;
  });
  afterAll(async () => {
    await running?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads the vid offsets of a graph it opens from the engine's file, a few thousand at a time, so requests get turns", async () => {
    // Each block of the file is read in one turn of the event loop (at 1M companies, batches of
    // 50,000 rows from the engine held requests for over a second at every switch).
    const files = jest.spyOn(vidOffsets, 'exportedVidOffsets');
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const store = embeddedStore(config, log, 1);
    try {
      await store.open();
      expect(files).toHaveBeenCalledTimes(1);
      // Some 4,000 companies a block.
      expect(files.mock.calls[0]![2]).toBeLessThanOrEqual(64 << 10);
      expect(stream.mock.calls.filter(([query]) => query.name === 'company/vid-offsets')).toEqual([]);
    } finally {
      files.mockRestore();
      stream.mockRestore();
      await store.close();
    }
  });

  it('answers every read while two imports switch the graph, and then serves the newer one', async () => {
    const vids = csvColumn(path.join(input, 'companies.csv'), 'vid').slice(0, 40);
    const edges = csvColumn(path.join(input, 'relationships.csv'), 'edge_id').slice(0, 40);
    const words = csvColumn(path.join(input, 'companies.csv'), 'name')
      .slice(0, 40)
      .map((n) => n.split(' ')[0]!);
    const reads = [
      (i: number) => `/v1/companies/${vids[i % vids.length]}/`,
      (i: number) => `/v1/edges/${edges[i % edges.length]}/`,
      (i: number) => `/v1/companies/${vids[i % vids.length]}/suppliers/?limit=10`,
      (i: number) => `/v1/companies/${vids[i % vids.length]}/cluster_customers/?limit=10`,
      (i: number) => `/v1/companies/?name=${encodeURIComponent(words[i % words.length]!)}`,
    ];
    const failures: string[] = [];
    let answered = 0;
    let reading = true;
    const reader = async (w: number) => {
      for (let i = w; reading; i += 7) {
        const p = reads[i % reads.length]!(i);
        try {
          const res = await get(p);
          await res.arrayBuffer();
          if (res.status === 200) answered++;
          else failures.push(`${res.status} ${p}`);
        } catch (err) {
          failures.push(`${(err as Error).message} ${p}`);
        }
      }
    };
    const readers = Array.from({ length: 6 }, (_, w) => reader(w));
    try {
      await runImport();
      appendRows(path.join(input, 'companies.csv'), [
        companyRow({ vid: 'late-1', name: 'Quillfeather Tooling GmbH' }),
      ]);
      await runImport();
      // The server follows the newer generation (it looks every 2 s), and its search index with it.
      const deadline = Date.now() + 30_000;
      while (!(await servesLate()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(100);
    expect(await servesLate()).toBe(true);
    expect(lines.filter((l) => l.level >= ERROR_LEVEL)).toEqual([]);
  }, 120_000);

  it('ends a tier walk begun before a switch on the graph it began on', async () => {
    const customers = csvColumn(path.join(input, 'relationships.csv'), 'customer_id');
    const root = mostSupplied(customers);
    const suppliers = customers.filter((vid) => vid === root).length;
    const store = running.store as EmbeddedGraphStore;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let companies = 0;
    let rows = 0;
    // The engine walks (no walk memory here); its first batch waits until the store has switched.
    const walk = store.walkTiers(
      { root, direction: 'suppliers', tiers: 3, evidenceFrom: null },
      {
        companies: async (batch) => {
          await gate;
          companies += batch.length;
        },
        relationships: (_tier, batch) => void (rows += batch.length),
      },
    );
    const before = store.generation;
    await runImport();
    const deadline = Date.now() + 30_000;
    while (store.generation === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(store.generation).toBeGreaterThan(before);
    release();
    await expect(walk).resolves.toBe(true);
    expect(companies).toBeGreaterThan(suppliers);
    expect(rows).toBeGreaterThanOrEqual(suppliers);
  }, 120_000);

  it('serves on from the graph it has when the next one cannot be opened, and takes a later import', async () => {
    const proto = EmbeddedGraphStore.prototype as unknown as {
      openPool: (...args: unknown[]) => Promise<unknown>;
    };
    const openPool = proto.openPool;
    const refused = jest.spyOn(proto, 'openPool').mockImplementation(function (
      this: unknown,
      ...args: unknown[]
    ) {
      if (this === running.store) return Promise.reject(new Error('the next generation cannot be opened'));
      return openPool.apply(this, args);
    });
    const vid = csvColumn(path.join(input, 'companies.csv'), 'vid')[0]!;
    appendRows(path.join(input, 'companies.csv'), [
      companyRow({ vid: 'late-2', name: 'Zephyrine Castings Ltd' }),
    ]);
    const failed = () =>
      lines.filter(
        (l) =>
          l.msg ===
          'could not switch to the new graph; the one before serves on, and the switch is tried again',
      ).length;
    try {
      await runImport();
      const deadline = Date.now() + 30_000;
      while (failed() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(failed()).toBe(1);
      expect((await get(`/v1/companies/${vid}/`)).status).toBe(200);
      expect((await get('/v1/companies/late-1/')).status).toBe(200);
      expect((await get('/v1/companies/late-2/')).status).toBe(404);
    } finally {
      refused.mockRestore();
    }
    await runImport();
    const deadline = Date.now() + 30_000;
    while ((await get('/v1/companies/late-2/')).status !== 200 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect((await get('/v1/companies/late-2/')).status).toBe(200);
    expect((await get(`/v1/companies/${vid}/`)).status).toBe(200);
  }, 120_000);
});

describe('an embedded store closed while a tier walk holds its graph', () => {
  let dir: string;

  beforeAll(() => {
    dir = tempDir('walk-at-close');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('closes without waiting for the walk, whose next query is refused', async () => {
    const input = path.join(dir, 'dataset');
    await generateDataset({ companies: 300, seed: 7, outDir: input });
    const store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 64 });
    await store.open();
    await importDirectory(store, input, { workDir: dir, searchIndex: false });
    const root = mostSupplied(csvColumn(path.join(input, 'relationships.csv'), 'customer_id'));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => undefined;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    // The engine walks (no walk memory); the root's own relationships come between two queries.
    const walk = store.walkTiers(
      { root, direction: 'suppliers', tiers: 3, evidenceFrom: null },
      {
        companies: () => undefined,
        relationships: async (tier) => {
          if (tier !== 0) return;
          reached();
          await gate;
        },
      },
    );
    walk.catch(() => undefined);
    await atGate;
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      store.close().then(() => 'closed'),
      new Promise((r) => (timer = setTimeout(() => r('still waiting'), 10_000))),
    ]);
    // Not left pending past the test, where it would keep the worker's event loop alive.
    clearTimeout(timer);
    release();
    expect(closed).toBe('closed');
    await expect(walk).rejects.toThrow('graph store is closed');
  }, 60_000);
});

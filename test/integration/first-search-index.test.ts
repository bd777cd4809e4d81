import fs from 'node:fs';
import net from 'node:net';
import { JobQueue } from '../../src/jobs/job-queue';
import { CompanySearchIndex } from '../../src/search/company-search';
import { startServer } from '../../src/server';
import type { RunningServer } from '../../src/server';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { tempDir } from '../support/paths';
import { buildIndex, startServerBuildingIndex } from '../support/held-build';
import type { ServerBuildingIndex } from '../support/held-build';
import { recordingLogger, testConfig, TEST_KEY } from '../support/server';

const KEY = TEST_KEY;

/**
 * A server started on data with no saved search index builds one (a minute at 1M companies). It
 * listens meanwhile: health, readiness and every read but searches are answered, and a search is
 * refused with a retry time instead of being held for the whole build.
 */
describe('a server building its first search index', () => {
  let t: ServerBuildingIndex;
  let base: string;
  let running: RunningServer;
  let spy: jest.SpyInstance;
  const prepare = jest.spyOn(EmbeddedGraphStore.prototype, 'prepare');

  beforeAll(async () => {
    t = await startServerBuildingIndex('first-index');
    ({ base, running, build: spy } = t);
  });

  afterAll(async () => {
    prepare.mockRestore();
    await t?.stop();
  });

  const get = (p: string) => fetch(`${base}${p}`, { headers: { 'X-SERVICE-KEY': KEY } });
  const graphql = (query: string) =>
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'X-SERVICE-KEY': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });

  it('answers health, readiness and reads, and refuses searches with a time to retry', async () => {
    expect(spy).toHaveBeenCalledTimes(1);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    const readyBody = (await ready.json()) as { status: string; derived: Record<string, string> };
    expect(readyBody.status).toBe('starting');
    expect(readyBody.derived.search_index).toBe('building');

    const profile = await get('/v1/companies/boeing/');
    expect(profile.status).toBe(200);
    expect(((await profile.json()) as { name: string }).name).toBe('Boeing Co');
    const suppliers = await get('/v1/companies/boeing/suppliers/?limit=10');
    expect(suppliers.status).toBe(200);
    expect(((await suppliers.json()) as { results: unknown[] }).results).toHaveLength(4);

    for (const p of ['/v1/companies/?name=boeing', '/v1/companies/suggest/?q=boe']) {
      const refused = await get(p);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await refused.json()) as { code: string; detail: string };
      expect(problem.code).toBe('UNAVAILABLE');
      expect(problem.detail).toMatch(/search index is being built \(8 companies read so far\)/);
    }

    const gq = (await (
      await graphql('{ companies(name: "boeing", limit: 1) { results { vid } } }')
    ).json()) as {
      errors: { extensions: { code: string; retry_after_s: number } }[];
    };
    expect(gq.errors[0]!.extensions).toMatchObject({ code: 'UNAVAILABLE', retry_after_s: 5 });
    // Refused searches start no build of their own: the one under way is shared.
    expect(spy).toHaveBeenCalledTimes(1);
    // Nothing else that reads the whole graph runs beside the first index (walks, point reads).
    expect(prepare).not.toHaveBeenCalled();
  });

  it('answers searches and says it is ready once the index is built', async () => {
    t.release();
    await running.searchReady;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(prepare).toHaveBeenCalledTimes(1);
    const res = await get('/v1/companies/?name=boeing&limit=1');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: { vid: string }[] }).results[0]!.vid).toBe('boeing');
  });
});

describe('a server that cannot listen', () => {
  it('stops its first search index build, its job queue and its watch before closing the store', async () => {
    const dataDir = tempDir('first-index-port');
    const { log, lines } = recordingLogger();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    // The build reads the store and then waits until it is told to stop, as a long one would.
    const spy = jest.spyOn(CompanySearchIndex, 'build').mockImplementation(async (store, l, opts) => {
      await buildIndex(store, l, opts);
      await new Promise<void>((resolve) => opts?.signal?.addEventListener('abort', () => resolve()));
      opts?.signal?.throwIfAborted();
      throw new Error('not stopped');
    });
    const jobsClosed = jest.spyOn(JobQueue.prototype, 'close');
    // The store's watch on its generation file for imports by other processes ends too.
    const unfollowed = jest.fn();
    const follow = jest
      .spyOn(EmbeddedGraphStore.prototype, 'followExternalImports')
      .mockImplementation(() => unfollowed);
    try {
      const config = testConfig(dataDir, {
        PORT: String(port),
        LOG_LEVEL: 'warn',
        // No worker: a job it took at once would leave the queue library's 30 s liveness timer behind
        // when closed straight after (harmless to a process that exits, not to a test run).
        JOBS_WORKER: 'false',
      });
      await expect(startServer(config, log)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(spy).toHaveBeenCalledTimes(1);
      expect(jobsClosed).toHaveBeenCalledTimes(1);
      expect(unfollowed).toHaveBeenCalledTimes(1);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      spy.mockRestore();
      jobsClosed.mockRestore();
      follow.mockRestore();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { importDirectory } from '../../src/import/import-directory';
import type { SearchRow } from '../../src/domain/search-row';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { companyRow, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';
import { refuseEngineExports } from '../support/engine-exports';
import * as stagingFile from '../../src/store/staging-file';

/**
 * A server that must build its search index from the store (a layout of the index it does not read,
 * or a lost file) reads every company's search fields. The engine holds a query's whole result in its
 * buffer pool: read in one query, 1M companies did not fit the serving pool of 512 MiB. Read range by
 * range, each range scanned every company again (24 s at 1M). So the engine writes them to a file in
 * one scan, which holds nothing whole (2 s), and they are read from there; range by range only when
 * it cannot. Scaled down here: 8,000 companies with long descriptions (some 70 MB) and a pool of 64 MiB.
 */
describe('embedded store: every company read for the search index within the serving buffer pool', () => {
  const COMPANIES = 8000;
  let dir: string;
  /** The store with the serving pool of the test, and what else the step needs. */
  const storeWith = (options: Partial<EmbeddedStoreOptions>) =>
    new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 1, bufferPoolMb: 64, ...options });

  beforeAll(async () => {
    dir = tempDir('search-scan');
    const long = 'x'.repeat(9000);
    const input = writeImportDir(path.join(dir, 'input'), {
      companies: Array.from({ length: COMPANIES }, (_, i) =>
        companyRow({ vid: `c${i}`, description: `${long}${i}` }),
      ),
    });
    // The import's own pool is the engine's default (most of the RAM), as in production.
    const loader = storeWith({ importBufferPoolMb: 0 });
    await loader.open();
    try {
      await importDirectory(loader, input, { workDir: dir, searchIndex: false });
    } finally {
      await loader.close();
    }
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  afterEach(() => jest.restoreAllMocks());

  /** Each company read once, with its long description whole. */
  const expectEveryCompanyOnce = (rows: readonly SearchRow[]) => {
    const seen = new Map<string, number>();
    for (const r of rows) {
      expect(r.core.description).toBe(`${'x'.repeat(9000)}${r.vid.slice(1)}`);
      seen.set(r.vid, (seen.get(r.vid) ?? 0) + 1);
    }
    expect(seen.size).toBe(COMPANIES);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  };
  /** The range queries of the search scan among the queries a spy on the pool's stream saw. */
  const rangeReads = (stream: jest.SpiedFunction<ConnectionPool['stream']>) =>
    stream.mock.calls.filter(([q]) => q.name === 'search/scan-companies-range');
  /** The export files left beside the graph. */
  const exportsLeft = () =>
    fs.readdirSync(path.join(dir, 'graph')).filter((f) => f.startsWith('search-rows'));

  it('reads them from a file the engine writes in one scan, each company once, and leaves no file', async () => {
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const store = storeWith({ searchRowsPerQuery: 1000 });
    await store.open();
    try {
      const rows: SearchRow[] = [];
      await store.scanSearchRows((batch) => void rows.push(...batch));
      expectEveryCompanyOnce(rows);
      expect(rangeReads(stream)).toHaveLength(0);
      expect(exportsLeft()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('gives each of two reads at once every company once (the file is not shared)', async () => {
    const store = storeWith({});
    await store.open();
    try {
      const first: SearchRow[] = [];
      const second: SearchRow[] = [];
      await Promise.all([
        store.scanSearchRows((batch) => void first.push(...batch)),
        store.scanSearchRows((batch) => void second.push(...batch)),
      ]);
      expectEveryCompanyOnce(first);
      expectEveryCompanyOnce(second);
      expect(exportsLeft()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('fails, rather than give part of them, when the store closes while the file is read', async () => {
    const store = storeWith({});
    await store.open();
    const look = stagingFile.firstQuoted;
    jest.spyOn(stagingFile, 'firstQuoted').mockImplementation(async (file, afterBlock, blockBytes) => {
      await store.close();
      return look(file, afterBlock, blockBytes);
    });
    const rows: SearchRow[] = [];
    await expect(store.scanSearchRows((batch) => void rows.push(...batch))).rejects.toThrow(
      'graph store closed or switched',
    );
    expect(rows).toEqual([]);
    expect(exportsLeft()).toEqual([]);
  }, 60_000);

  it('reads them range by range, with a warning, when the engine cannot write the file', async () => {
    const { log, lines } = recordingLogger();
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    refuseEngineExports('IO exception: No space left on device');
    const store = storeWith({ searchRowsPerQuery: 1000, logger: log });
    await store.open();
    try {
      const rows: SearchRow[] = [];
      await store.scanSearchRows((batch) => void rows.push(...batch));
      expectEveryCompanyOnce(rows);
      expect(rangeReads(stream)).toHaveLength(8);
      expect(lines.map((l) => l.msg)).toContain(
        'search rows read range by range: the engine could not write them to a file',
      );
      expect(exportsLeft()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});

import fs from 'node:fs';
import path from 'node:path';
import { importDirectory } from '../../src/import/import-directory';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { companyRow, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';

/**
 * A server that must build its search index from the store (a layout of the index it does not read,
 * or a lost file) reads every company's search fields. The engine holds a query's whole result in its
 * buffer pool: read in one query, 1M companies did not fit the serving pool of 512 MiB. Scaled down
 * here: 8,000 companies with long descriptions (some 70 MB) and a pool of 64 MiB.
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

  it('reads them range by range, each company once, with its fields whole', async () => {
    const store = storeWith({ searchRowsPerQuery: 1000 });
    await store.open();
    try {
      const seen = new Map<string, number>();
      await store.scanSearchRows((rows) => {
        for (const r of rows) {
          expect(r.core.description).toBe(`${'x'.repeat(9000)}${r.vid.slice(1)}`);
          seen.set(r.vid, (seen.get(r.vid) ?? 0) + 1);
        }
      });
      expect(seen.size).toBe(COMPANIES);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await store.close();
    }
  }, 60_000);
});

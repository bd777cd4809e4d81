import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { tempDir } from '../support/paths';

/**
 * The embedded engine's bulk load runs on threads of its own while this thread writes the derived
 * files beside it. Whatever the load waits for on this thread between two tables leaves the engine
 * idle: the companies' offsets, which the walks' memory needs, are read before the next table loads,
 * and read a batch a turn they waited a block of the point-read file's writing for each batch.
 */
describe('the bulk load of an import', () => {
  let dir: string;
  let input: string;

  beforeAll(async () => {
    dir = tempDir('import-vid-offsets');
    input = path.join(dir, 'dataset');
    // More companies than a server reads offsets of in one turn of its event loop.
    await generateDataset({ companies: 3_000, seed: 3, outDir: input });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * The batches of each read of the offsets while `store` imports the dataset: the import's, then the
   * switch's of the store, which serves the new data once the import ends.
   */
  async function offsetReads(store: EmbeddedGraphStore): Promise<number[]> {
    const reads: number[] = [];
    const stream = ConnectionPool.prototype.stream;
    const streams = jest.spyOn(ConnectionPool.prototype, 'stream').mockImplementation(function (
      this: ConnectionPool,
      query,
      params,
      size,
      onBatch,
    ) {
      if (query.name !== 'company/vid-offsets') return stream.call(this, query, params, size, onBatch);
      const read = reads.push(0) - 1;
      return stream.call(this, query, params, size, (rows) => {
        reads[read]!++;
        return onBatch(rows);
      });
    });
    try {
      await importDirectory(store, input, { workDir: dir });
    } finally {
      streams.mockRestore();
    }
    expect(fs.existsSync(store.derivedDataFile('walk-memory')!.file)).toBe(true);
    const [counted] = await (
      store as unknown as { q(name: string): Promise<{ relationships: unknown }[]> }
    ).q('relationship/count');
    expect(Number(counted!.relationships)).toBeGreaterThan(3_000);
    return reads;
  }

  const store = (name: string) =>
    new EmbeddedGraphStore({
      dir: path.join(dir, name),
      connections: 1,
      bufferPoolMb: 128,
      walkMemoryAtImport: true,
    });

  it("reads the companies' offsets for the walks' memory in large batches where nothing is served", async () => {
    const importer = store('graph');
    await importer.open();
    try {
      const reads = await offsetReads(importer);
      expect(reads).toHaveLength(2);
      expect(reads[0]).toBe(1);
      // The switch to the new data reads them in short turns, as a server does between its requests.
      expect(reads[1]).toBeGreaterThan(1);
    } finally {
      await importer.close();
    }
  });

  it('reads them in short turns in a store prepared to serve', async () => {
    const serving = store('served');
    await serving.open();
    serving.prepare();
    try {
      const reads = await offsetReads(serving);
      expect(reads[0]).toBeGreaterThan(1);
    } finally {
      await serving.close();
    }
  });
});

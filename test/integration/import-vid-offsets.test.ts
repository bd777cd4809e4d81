import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import type { Logger } from '../../src/logger';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import * as vidOffsets from '../../src/store/exported-vid-offsets';
import * as stagingFile from '../../src/store/staging-file';
import { refuseEngineExports } from '../support/engine-exports';
import { tempDir } from '../support/paths';

/**
 * The embedded engine's bulk load runs on threads of its own while this thread writes the derived
 * files beside it. Whatever the load waits for on this thread between two tables leaves the engine
 * idle: the companies' offsets, which the walks' memory needs, are read before the next table loads,
 * and each turn of this thread they take waits for a block of the point-read file's writing.
 */
describe('the bulk load of an import', () => {
  let dir: string;
  let input: string;

  beforeAll(async () => {
    dir = tempDir('import-vid-offsets');
    input = path.join(dir, 'dataset');
    // More companies than a server reads offsets of in one turn of its event loop, from the engine's
    // file (64 KiB, some 13 bytes a company here) or row by row (2,000).
    await generateDataset({ companies: 6_000, seed: 3, outDir: input });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  interface Reads {
    /** The turns each read of the engine's file of offsets took: the import's, then the switch's. */
    files: number[];
    /** The batches each read of the offsets row by row took. */
    rows: number[];
  }

  /** How `store` reads the companies' offsets while it imports the dataset and switches to it. */
  async function offsetReads(store: EmbeddedGraphStore): Promise<Reads> {
    const reads: Reads = { files: [], rows: [] };
    const fromFile = vidOffsets.exportedVidOffsets;
    const files = jest
      .spyOn(vidOffsets, 'exportedVidOffsets')
      .mockImplementation((file, afterBlock, blockBytes) => {
        const read = reads.files.push(0) - 1;
        const turn = () => {
          reads.files[read]!++;
          afterBlock?.();
        };
        return fromFile(file, turn, blockBytes);
      });
    const stream = ConnectionPool.prototype.stream;
    const streams = jest.spyOn(ConnectionPool.prototype, 'stream').mockImplementation(function (
      this: ConnectionPool,
      query,
      params,
      size,
      onBatch,
    ) {
      if (query.name !== 'company/vid-offsets') return stream.call(this, query, params, size, onBatch);
      const read = reads.rows.push(0) - 1;
      return stream.call(this, query, params, size, (rows) => {
        reads.rows[read]!++;
        return onBatch(rows);
      });
    });
    try {
      await importDirectory(store, input, { workDir: dir });
    } finally {
      files.mockRestore();
      streams.mockRestore();
    }
    expect(fs.existsSync(store.derivedDataFile('walk-memory')!.file)).toBe(true);
    const [counted] = await (
      store as unknown as { q(name: string): Promise<{ relationships: unknown }[]> }
    ).q('relationship/count');
    expect(Number(counted!.relationships)).toBeGreaterThan(6_000);
    return reads;
  }

  /** Spies on the engine's statements: `onLoad` hears the table of each bulk load as it starts. */
  function spyOnLoads(onLoad: (table: string) => void): jest.SpyInstance {
    const run = ConnectionPool.prototype.run;
    return jest.spyOn(ConnectionPool.prototype, 'run').mockImplementation(function (
      this: ConnectionPool,
      text,
      options,
    ) {
      const table = /^COPY (\w+) FROM/.exec(text)?.[1];
      if (table) onLoad(table);
      return run.call(this, text, options);
    });
  }

  const warnings: string[] = [];
  const logger = {
    info: () => undefined,
    warn: (_: unknown, message: string) => warnings.push(message),
    error: () => undefined,
    debug: () => undefined,
  } as unknown as Logger;
  beforeEach(() => warnings.splice(0));

  const store = (name: string) =>
    new EmbeddedGraphStore({
      dir: path.join(dir, name),
      connections: 1,
      bufferPoolMb: 128,
      walkMemoryAtImport: true,
      logger,
    });

  it("reads the companies' offsets from a file the engine writes, whole where nothing is served", async () => {
    const importer = store('graph');
    await importer.open();
    try {
      const reads = await offsetReads(importer);
      expect(reads.rows).toEqual([]);
      expect(reads.files).toHaveLength(2);
      // The file in one turn, then its end.
      expect(reads.files[0]).toBeLessThanOrEqual(2);
      // The switch to the new data reads it in short turns, as a server does between its requests.
      expect(reads.files[1]).toBeGreaterThan(2);
      expect(warnings).toEqual([]);
    } finally {
      await importer.close();
    }
  });

  it('reads it in short turns in a store prepared to serve', async () => {
    const serving = store('served');
    await serving.open();
    serving.prepare();
    try {
      const reads = await offsetReads(serving);
      expect(reads.rows).toEqual([]);
      expect(reads.files[0]).toBeGreaterThan(2);
    } finally {
      await serving.close();
    }
  });

  it("loads the next table while the offsets are read from the engine's file", async () => {
    const importer = store('beside');
    await importer.open();
    const copied: string[] = [];
    const runs = spyOnLoads((table) => copied.push(table));
    const fromFile = vidOffsets.exportedVidOffsets;
    let copiedWhileRead: string[] | null = null;
    const files = jest
      .spyOn(vidOffsets, 'exportedVidOffsets')
      .mockImplementation(async (file, afterBlock, blockBytes) => {
        const read = await fromFile(file, afterBlock, blockBytes);
        // The import's read (the switch's comes after the load) ends once the next table's load has
        // begun, or after a second, if the load waits for it.
        if (copiedWhileRead) return read;
        for (let waited = 0; !copied.includes('Edge') && waited < 1_000; waited += 10)
          await new Promise((resolve) => setTimeout(resolve, 10));
        copiedWhileRead = [...copied];
        return read;
      });
    try {
      await importDirectory(importer, input, { workDir: dir });
      expect(files).toHaveBeenCalledTimes(2);
      expect(copiedWhileRead!.slice(0, 2)).toEqual(['Company', 'Edge']);
      expect(fs.existsSync(importer.derivedDataFile('walk-memory')!.file)).toBe(true);
      expect(warnings).toEqual([]);
    } finally {
      runs.mockRestore();
      files.mockRestore();
      await importer.close();
    }
  });

  it("imports all the same when the offsets' file cannot be read, without the walks' memory", async () => {
    const importer = store('unread');
    await importer.open();
    const files = jest
      .spyOn(vidOffsets, 'exportedVidOffsets')
      .mockRejectedValueOnce(new Error('an unreadable file'));
    try {
      await importDirectory(importer, input, { workDir: dir });
      expect(files).toHaveBeenCalled();
      // A server derives it at its first start.
      expect(fs.existsSync(importer.derivedDataFile('walk-memory')!.file)).toBe(false);
      expect(warnings).toContain('could not prepare derived data while loading; it is derived later');
      const [counted] = await (
        importer as unknown as { q(name: string): Promise<{ relationships: unknown }[]> }
      ).q('relationship/count');
      expect(Number(counted!.relationships)).toBeGreaterThan(6_000);
    } finally {
      files.mockRestore();
      await importer.close();
    }
  });

  it("loads no table beside the offsets' rows when the engine's file of them cannot be used", async () => {
    const importer = store('quoted');
    await importer.open();
    const events: string[] = [];
    const runs = spyOnLoads((table) => events.push(`load ${table}`));
    const stream = ConnectionPool.prototype.stream;
    const streams = jest.spyOn(ConnectionPool.prototype, 'stream').mockImplementation(async function (
      this: ConnectionPool,
      query,
      params,
      size,
      onBatch,
    ) {
      if (query.name !== 'company/vid-offsets') return stream.call(this, query, params, size, onBatch);
      events.push('offsets by rows');
      await stream.call(this, query, params, size, onBatch);
      events.push('offsets read');
    });
    // A file the engine had to quote a value in (a seed may store a tab), found after a while.
    const look = stagingFile.firstQuoted;
    let quotedOnce = false;
    const quoted = jest.spyOn(stagingFile, 'firstQuoted').mockImplementation(async (file, ...rest) => {
      if (quotedOnce || !path.basename(file).startsWith('vid-offsets')) return look(file, ...rest);
      quotedOnce = true;
      await new Promise((resolve) => setTimeout(resolve, 200));
      return 0;
    });
    try {
      await importDirectory(importer, input, { workDir: dir });
      expect(quotedOnce).toBe(true);
      // The Edge table's load waits for the rows, as it waits for nothing else.
      expect(events.slice(0, 4)).toEqual(['load Company', 'offsets by rows', 'offsets read', 'load Edge']);
      expect(fs.existsSync(importer.derivedDataFile('walk-memory')!.file)).toBe(true);
    } finally {
      runs.mockRestore();
      streams.mockRestore();
      quoted.mockRestore();
      await importer.close();
    }
  });

  it("opens the graph all the same when a server cannot read the engine's file of offsets", async () => {
    const offsetsOf = (s: EmbeddedGraphStore) => (s as unknown as { vidByOffset: string[] }).vidByOffset;
    const importer = store('start');
    await importer.open();
    await importDirectory(importer, input, { workDir: dir });
    await importer.close();
    const fromFile = store('start');
    await fromFile.open();
    const expected = [...offsetsOf(fromFile)];
    await fromFile.close();
    expect(expected.filter((v) => v !== undefined && v !== '')).toHaveLength(6_000);
    warnings.splice(0);
    const server = store('start');
    const files = jest
      .spyOn(vidOffsets, 'exportedVidOffsets')
      .mockRejectedValueOnce(Object.assign(new Error('too many open files'), { code: 'EMFILE' }));
    try {
      await server.open();
      expect(files).toHaveBeenCalledTimes(1);
      expect(warnings).toEqual([
        "the companies' offsets read row by row: the engine's file of them could not be read",
      ]);
      expect(offsetsOf(server)).toEqual(expected);
    } finally {
      files.mockRestore();
      await server.close();
    }
  });

  it('reads them row by row where the engine cannot write the file, in large batches where nothing is served', async () => {
    const importer = store('refused');
    await importer.open();
    const refused = refuseEngineExports('no room left on the disk');
    try {
      const reads = await offsetReads(importer);
      expect(reads.files).toEqual([]);
      expect(reads.rows).toHaveLength(2);
      expect(reads.rows[0]).toBe(1);
      expect(reads.rows[1]).toBeGreaterThan(1);
      expect(warnings.filter((w) => w.startsWith("the companies' offsets read row by row"))).toHaveLength(2);
    } finally {
      refused.mockRestore();
      await importer.close();
    }
  });
});

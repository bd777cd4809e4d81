import fs from 'node:fs';
import { createLogger } from '../../src/logger';
import { CompanySearchIndex } from '../../src/search/company-search';
import { startServer } from '../../src/server';
import type { RunningServer } from '../../src/server';
import { splitStatements } from '../../src/store/cypher-files';
import { embeddedStore } from '../../src/store/open-store';
import { readSeed, tempDir } from './paths';
import { testConfig } from './server';

/** The search index build itself, whatever a test puts in its place. */
export const buildIndex = CompanySearchIndex.build.bind(CompanySearchIndex);

export interface ServerBuildingIndex {
  running: RunningServer;
  base: string;
  /** Spies on the build (what the server started). */
  build: jest.SpyInstance;
  /** Lets the held build end. */
  release(): void;
  /** Releases the build, stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * The real server on the hand-made seed graph, as on a first start after an import: the data is
 * there before it starts, no search index was saved, and its first build reads the store and then
 * waits for `release()`, as a long one would.
 */
export async function startServerBuildingIndex(prefix: string): Promise<ServerBuildingIndex> {
  const dataDir = tempDir(prefix);
  const config = testConfig(dataDir);
  const log = createLogger('silent');
  const seeding = embeddedStore(config, log);
  await seeding.open();
  await seeding.runScript(splitStatements(readSeed('test-small.cypher')));
  await seeding.close();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const build = jest.spyOn(CompanySearchIndex, 'build').mockImplementation(async (store, l, opts) => {
    const index = await buildIndex(store, l, opts);
    await gate;
    return index;
  });
  const running = await startServer(config, log);
  return {
    running,
    base: `http://127.0.0.1:${running.port}`,
    build,
    release: () => release(),
    stop: async () => {
      release();
      build.mockRestore();
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

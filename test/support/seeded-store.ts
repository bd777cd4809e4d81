import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { readSeed } from './paths';

/**
 * An embedded store in `<dir>/graph` that logs at info into `logged`, one JSON
 * line per entry. `seed` false reopens the graph as it is (a seed counts as a
 * change of the data, so it is a new key for every derived file).
 */
export async function openSeededStore(
  dir: string,
  logged: string[],
  options: Partial<EmbeddedStoreOptions>,
  seed = true,
): Promise<EmbeddedGraphStore> {
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(String(chunk));
        done();
      },
    }),
  );
  const store = new EmbeddedGraphStore({
    dir: path.join(dir, 'graph'),
    connections: 2,
    bufferPoolMb: 128,
    ...options,
    logger,
  });
  await store.open();
  if (seed) await store.runScript(splitStatements(readSeed('test-small.cypher')));
  return store;
}

import path from 'node:path';
import type { Config } from '../config/env';
import type { Logger } from '../logger';
import { EmbeddedGraphStore } from './embedded/embedded.store';
import type { GraphStore } from './graph-store';

/** Opens the configured graph store. */
export async function openStore(config: Config, log: Logger): Promise<GraphStore> {
  if (config.STORE === 'neo4j') {
    throw new Error('STORE=neo4j is not available in this build yet; use STORE=embedded.');
  }
  const store = new EmbeddedGraphStore({
    dir: path.join(config.dataDir, 'graph'),
    connections: config.EMBEDDED_CONNECTIONS,
    bufferPoolMb: config.EMBEDDED_BUFFER_POOL_MB,
    logger: log.child({ module: 'store' }),
  });
  await store.open();
  return store;
}

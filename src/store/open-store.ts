import path from 'node:path';
import type { Config } from '../config/env';
import type { Logger } from '../logger';
import { EmbeddedGraphStore } from './embedded/embedded.store';
import type { GraphStore } from './graph-store';
import { Neo4jGraphStore } from './neo4j/neo4j.store';

/**
 * The Neo4j adapter of the configured server (not yet opened). `serving`: the store of a server,
 * which holds the relationships in memory for tier walks when NEO4J_WALK_MEMORY says so and
 * answers point reads from a file when NEO4J_POINT_READS does.
 */
export function neo4jStore(
  config: Config,
  log: Logger,
  migrateOnOpen: boolean,
  serving = false,
): Neo4jGraphStore {
  return new Neo4jGraphStore({
    uri: config.NEO4J_URI ?? '',
    user: config.NEO4J_USER,
    password: config.NEO4J_PASSWORD ?? '',
    database: config.NEO4J_DATABASE,
    maxPoolSize: config.NEO4J_MAX_POOL_SIZE,
    acquireTimeoutMs: config.NEO4J_ACQUIRE_TIMEOUT_MS,
    connectTimeoutMs: config.NEO4J_CONNECT_TIMEOUT_MS,
    queryTimeoutMs: config.NEO4J_QUERY_TIMEOUT_MS,
    importBatchSize: config.NEO4J_IMPORT_BATCH,
    importParallel: config.NEO4J_IMPORT_PARALLEL,
    generationPollMs: config.NEO4J_GENERATION_POLL_S * 1000,
    migrateOnOpen,
    // The search index built from the graph is saved here for the next start.
    derivedDir: config.dataDir,
    walkMemory: serving && config.NEO4J_WALK_MEMORY ? 'background' : 'off',
    pointFile: serving && config.NEO4J_POINT_READS ? 'background' : 'off',
    warmPointFile: config.POINT_READS_WARM,
    // Any import writes it for the servers that read it, the CLI's too.
    pointFileAtImport: config.NEO4J_POINT_READS,
    logger: log.child({ module: 'store' }),
  });
}

/**
 * The embedded adapter on DATA_DIR/graph (not yet opened). `serving`: the store of a
 * server, which holds the relationships in memory for tier walks when EMBEDDED_WALK_MEMORY
 * says so and answers point reads from a file when EMBEDDED_POINT_READS does; a command
 * that opens the store for a moment does neither, but its imports write that file.
 */
export function embeddedStore(
  config: Config,
  log: Logger,
  connections = config.EMBEDDED_CONNECTIONS,
  serving = false,
) {
  return new EmbeddedGraphStore({
    dir: path.join(config.dataDir, 'graph'),
    connections,
    bufferPoolMb: config.EMBEDDED_BUFFER_POOL_MB,
    importBufferPoolMb: config.EMBEDDED_IMPORT_BUFFER_POOL_MB,
    importCompression: config.EMBEDDED_IMPORT_COMPRESSION,
    walkMemory: serving && config.EMBEDDED_WALK_MEMORY ? 'background' : 'off',
    pointFile: serving && config.EMBEDDED_POINT_READS ? 'background' : 'off',
    pointFileEdges: config.EMBEDDED_POINT_READS_EDGES,
    warmPointFile: config.POINT_READS_WARM,
    // Any import writes it for the servers that read it, the CLI's too.
    pointFileAtImport: config.EMBEDDED_POINT_READS,
    walkMemoryAtImport: config.EMBEDDED_WALK_MEMORY,
    logger: log.child({ module: 'store' }),
  });
}

/**
 * Opens the configured graph store. On Neo4j, missing constraints and indexes
 * are created first (the same migration as `tiergraph migrate`). `serving`: see embeddedStore.
 */
export async function openStore(config: Config, log: Logger, serving = false): Promise<GraphStore> {
  const store =
    config.STORE === 'neo4j'
      ? neo4jStore(config, log, true, serving)
      : embeddedStore(config, log, config.EMBEDDED_CONNECTIONS, serving);
  await store.open();
  return store;
}

import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import type { Config } from './config/env';
import { SERVE_ENV, missingServeEnv, missingServeFlags, turnPretenuringOff } from './heap-settings';
import type { Logger } from './logger';
import { buildSchema } from './graphql/schema';
import { buildApp } from './http/app';
import { Dependencies } from './http/dependencies';
import { createHttpServer } from './http/http-server';
import { ApiKeyStore } from './http/api-keys';
import { SearchIndexHolder } from './search/search-index-holder';
import { SearchThreads, searchThreadsAvailable } from './search/search-threads';
import { CompaniesService } from './services/companies.service';
import { EdgesService } from './services/edges.service';
import { PathsService } from './services/paths.service';
import { RelationshipsService } from './services/relationships.service';
import { ReadCache } from './services/read-cache';
import type { GraphStore } from './store/graph-store';
import { openStore } from './store/open-store';
import { redisRateLimitStore } from './http/rate-limit-store';
import { LocalBlobStore } from './blobs/local/local.blob-store';
import { downloadsRoutes } from './blobs/local/downloads.routes';
import { importDirectory, removeStaleStaging, stagingRoot } from './import/import-directory';
import { generateDataset } from './demo/generate';
import type { BlobStore } from './blobs/blob-store';
import { GcsBlobStore } from './blobs/gcs/gcs.blob-store';
import { TierViewService } from './services/tierview.service';
import { JobQueue, QUEUE_DRAIN_MS } from './jobs/job-queue';
import { openJobsEngine } from './jobs/open-jobs-engine';
import { jobQueueOptions } from './jobs/job-queue.options';
import { stopWithin } from './stop-within';

/** How often the server checks that its search index and list heads are of the data as it is. */
const DERIVED_CATCH_UP_MS = 1000;
/**
 * How long a shutdown waits for the jobs database's connections to close: a server that stopped
 * answering in the middle of it was seen to hold the close for good.
 */
const JOBS_CLOSE_MS = 15_000;
export interface RunningServer {
  server: Server;
  port: number;
  store: GraphStore;
  blobs: BlobStore;
  jobs: JobQueue;
  search: SearchIndexHolder;
  /** Resolves once searches are answered: the first search index is loaded or built (never rejects). */
  searchReady: Promise<void>;
  keys: ApiKeyStore;
  close(): Promise<void>;
}

/**
 * Starts the service: opens the store (loading the demo dataset into an empty
 * one), makes sure an API key exists, starts loading or building the search index,
 * and listens without waiting for it (see `searchReady`).
 */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  turnPretenuringOff();
  // This account's only, as every file under it holds the data owner's or callers' data or secrets.
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Imports killed mid-way leave their staging files behind (earlier builds staged
  // CLI imports straight under DATA_DIR, so that is looked at too).
  for (const workDir of [stagingRoot(config.dataDir), config.dataDir]) {
    for (const dir of removeStaleStaging(workDir))
      log.info({ dir }, 'removed staging files of an interrupted import');
  }
  const store = await openStore(config, log, true);
  // What has been started so far, stopped in reverse order before the store closes when the start
  // fails later on (a port in use, say): nothing of a failed start keeps running.
  const started: (() => Promise<unknown>)[] = [];
  try {
    const { companies } = await store.stats();
    if (companies === 0 && config.SEED_DEMO) {
      if (store.pristine) await loadDemo(config, store, log);
      else log.warn('the store is empty, as the last import left it: the demo dataset is not loaded');
    }

    const keys = new ApiKeyStore(config.dataDir, config.API_KEYS, { log: log.child({ module: 'api-keys' }) });
    if (!keys.hasActiveKey) {
      const { key } = keys.create('created at first start');
      // Printed once on purpose: only its hash is stored.
      process.stdout.write(
        `\nNo API key was configured, so one was created (only its hash is kept in ${keys.file}):\n\n  ${config.API_KEY_HEADER}: ${key}\n\nKeep it now; it will not be shown again. More keys: tiergraph keys create\n\n`,
      );
    }

    const unfollow = store.followExternalImports?.() ?? (() => undefined);
    started.push(() => Promise.resolve(unfollow()));
    const searchLog = log.child({ module: 'search' });
    // From the TypeScript sources (tests) there is no compiled worker: searches stay on the main thread.
    const threadCount = config.SEARCH_THREADS ?? Math.min(8, os.availableParallelism());
    const threads =
      threadCount > 0 && searchThreadsAvailable() ? new SearchThreads(threadCount, searchLog) : null;
    // The server listens while a first index is built (a minute or more at 1M companies when none was saved for
    // the data): everything but searches is answered from the store meanwhile, and /readyz says when
    // searches are; a search before then is refused with Retry-After rather than held.
    const search = new SearchIndexHolder(store, searchLog, threads, { refuseUntilBuilt: true });
    started.push(() => search.close());
    const searchReady = search.rebuild().then(
      () => undefined,
      (err: unknown) => {
        // Stopped by a close: nothing failed.
        if (!search.closed)
          searchLog.error({ err }, 'search index build failed; the next search tries again');
      },
    );
    const limits = { maxPageSize: config.MAX_PAGE_SIZE, maxOffset: config.MAX_OFFSET };
    const cache = new ReadCache(config.READ_CACHE_ENTRIES, () => store.generation);
    let listeningPort = config.PORT;
    const local = new LocalBlobStore(
      config.dataDir,
      // A link given in answer to a request names the address that client used; one made with no
      // request (a callback's) names localhost. PUBLIC_URL, when set, wins over both.
      (origin) => config.PUBLIC_URL ?? origin ?? `http://localhost:${listeningPort}`,
      config.DOWNLOAD_SECRET,
    );
    if (config.BLOB_STORE === 'local') {
      const budget = config.EXPORT_MAX_BYTES ?? local.defaultBudget();
      local.limitBytes(budget, Math.min(budget, config.EXPORT_MAX_BYTES_PER_KEY ?? Math.floor(budget / 2)));
    }
    const gcs =
      config.BLOB_STORE === 'gcs'
        ? new GcsBlobStore({
            bucket: config.GCS_BUCKET!,
            prefix: config.GCS_PREFIX,
            keyFilename: config.GCS_KEY_FILE,
            projectId: config.GCS_PROJECT_ID,
          })
        : null;
    await gcs?.check();
    const blobs: BlobStore = gcs ?? local;
    const jobsEngine = openJobsEngine(config, log.child({ module: 'jobs' }));
    started.push(() => stopWithin('jobs database connection', () => jobsEngine.close(), JOBS_CLOSE_MS, log));
    await jobsEngine.open?.();
    const jobs = new JobQueue(
      jobQueueOptions(config, {
        engine: jobsEngine,
        store,
        blobs,
        tierview: new TierViewService(store, blobs),
        log: log.child({ module: 'jobs' }),
        limits,
        revokedKey: (id) => keys.revoked(id),
      }),
    );
    await jobs.start();
    // The queue drains running exports (QUEUE_DRAIN_MS) before it lets go.
    started.push(() => stopWithin('job queue', () => jobs.close(), JOBS_CLOSE_MS + QUEUE_DRAIN_MS, log));
    // Servers outside this process that answers depend on: /readyz says whether they answer now.
    const dependencies = new Dependencies({
      ...(store.reachable ? { graph_store: () => store.reachable!() } : {}),
      ...(config.JOBS_BACKEND !== 'embedded' ? { jobs_database: () => jobsEngine.runs.get(0) } : {}),
    });
    const services = {
      companies: new CompaniesService(store, search, limits, cache),
      relationships: new RelationshipsService(
        store,
        limits,
        cache,
        () => search.fresh(),
        log.child({ module: 'lists' }),
      ),
      edges: new EdgesService(store, cache),
      paths: new PathsService(store, cache, config.MAX_TIERS),
      jobs,
    };
    // Once searches are answered, the long lists' heads are read in the background (until then their
    // pages come from the store), and so is what the store keeps for itself (the walks' relationships,
    // the point-read file). Not beside the first search index: each reads the whole graph, and at 1M
    // companies the three at once took the index 152 s instead of 65 and the process to 5.5 GB.
    let closed = false;
    void searchReady.then(() => {
      if (closed) return;
      services.relationships.heads.prepare();
      store.prepare?.();
    });
    // After every change of the data (an import by another process included), the search index and
    // then the list heads are rebuilt without waiting for a search or a list to ask for them.
    const catchUp = () => {
      search.fresh();
      if (search.ready) services.relationships.heads.prepare();
    };
    const keepCurrent = setInterval(catchUp, DERIVED_CATCH_UP_MS);
    keepCurrent.unref();
    started.push(async () => {
      closed = true;
      clearInterval(keepCurrent);
      await services.relationships.heads.close();
    });
    const sharedLimits = config.RATE_LIMIT_REDIS_URL
      ? redisRateLimitStore(config.RATE_LIMIT_REDIS_URL, log.child({ module: 'rate-limits' }))
      : null;
    if (sharedLimits) started.push(() => sharedLimits.close());
    const { app, apollo } = await buildApp({
      schema: buildSchema(),
      services,
      keys,
      log: log.child({ module: 'http' }),
      keyHeader: config.API_KEY_HEADER,
      rateLimit: {
        max: config.RATE_LIMIT_MAX,
        windowS: config.RATE_LIMIT_WINDOW_S,
        store: sharedLimits?.store,
      },
      authFailures: {
        max: config.AUTH_FAILURE_MAX,
        windowS: config.AUTH_FAILURE_WINDOW_S,
        store: sharedLimits?.authFailures,
      },
      graphqlLimits: {
        maxDepth: config.GRAPHQL_MAX_DEPTH,
        maxCost: config.GRAPHQL_MAX_COST,
        maxPageSize: config.MAX_PAGE_SIZE,
        validateMs: config.GRAPHQL_VALIDATE_MS,
        maxTokens: config.GRAPHQL_MAX_TOKENS,
      },
      publicUrl: config.PUBLIC_URL,
      apiFacts: config,
      trustProxy: config.TRUST_PROXY,
      compressMinBytes: config.COMPRESS_MIN_BYTES,
      corsOrigins: config.CORS_ORIGINS,
      ready: () => search.ready,
      dependencies: () => dependencies.check(),
      // Asking starts what the data as it is now still lacks, as the timer above does.
      derived: () => {
        catchUp();
        return {
          search_index: search.fresh() ? 'ready' : 'building',
          list_heads: services.relationships.heads.state,
          ...store.derivedData?.(),
        };
      },
      dataVersion: () => `${store.generation}.${search.generation}`,
      open: config.BLOB_STORE === 'local' ? [downloadsRoutes(local)] : [],
    });
    started.push(() => apollo.stop());
    const server = await new Promise<Server>((resolve, reject) => {
      const s = createHttpServer(app);
      s.once('error', reject);
      s.listen(config.PORT, config.HOST, () => resolve(s));
    });
    server.keepAliveTimeout = 65_000;
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    listeningPort = port;
    const missing = missingServeFlags();
    if (missing.length > 0)
      log.info(
        { missing },
        `node was started without ${missing.join(' ')}, which npm start and the image give the server: reads take more CPU (README, Production)`,
      );
    const unset = missingServeEnv();
    if (unset.length > 0)
      log.info(
        { unset },
        `started without ${unset.map((name) => `${name}=${SERVE_ENV[name]}`).join(' ')} in the environment, which the image sets: a start that builds its derived files holds some 400-600 MB more at 1M companies (README, Memory)`,
      );
    log.info(
      { port },
      `tiergraph listening on http://localhost:${port} (REST /v1, GraphQL /graphql, explorer /explorer, docs /docs)`,
    );
    let closing: Promise<void> | null = null;
    return {
      server,
      port,
      store,
      search,
      searchReady,
      keys,
      blobs,
      jobs,
      close: () =>
        (closing ??= (async () => {
          closed = true;
          unfollow();
          clearInterval(keepCurrent);
          server.closeIdleConnections();
          // A client that never reads its response keeps the connection busy, and close would wait for it.
          const force = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_S * 1000);
          await new Promise<void>((resolve) => server.close(() => resolve()));
          clearTimeout(force);
          // Then what the start began, last first, as after a failed start. A first search index build
          // under way stops; one being saved for the next start is finished rather than left half written.
          for (const stop of started.reverse()) await stop();
          await store.close();
        })()),
    };
  } catch (e) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    await store.close();
    throw e;
  }
}

/** Generates the deterministic demo dataset and imports it (first start on an empty store). */
async function loadDemo(config: Config, store: GraphStore, log: Logger): Promise<void> {
  const started = Date.now();
  const dir = path.join(config.dataDir, 'demo');
  fs.rmSync(dir, { recursive: true, force: true });
  log.info({ companies: config.DEMO_COMPANIES }, 'store is empty: loading the demo dataset');
  await generateDataset({ companies: config.DEMO_COMPANIES, seed: 1, outDir: dir });
  const result = await importDirectory(store, dir, { workDir: stagingRoot(config.dataDir), log });
  fs.rmSync(dir, { recursive: true, force: true });
  log.info({ ...result.counts, ...result.items, ms: Date.now() - started }, 'demo dataset loaded');
}

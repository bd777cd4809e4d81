import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseCallbackHosts } from '../domain/callback-hosts';

/** A switch: true/false, 1/0 or yes/no, in any case (SEED_DEMO=TRUE as well as true). */
const bool = z
  .preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(['true', 'false', '1', '0', 'yes', 'no']),
  )
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const intIn = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** MAX_PAGE_SIZE and MAX_OFFSET when unset; also the bounds of a job queue built without a config. */
export const DEFAULT_LIMITS = { maxPageSize: 100, maxOffset: 10_000 } as const;

/**
 * Every setting the service reads, with its default. The schema is the
 * documentation: README's settings table is kept in step with it.
 */
const schema = z.object({
  /** TCP port of the HTTP server (REST, GraphQL, explorer, downloads). */
  PORT: intIn(0, 65535).default(4000),
  /** Interface to bind; 0.0.0.0 serves every interface. */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Directory for the embedded graph, keys, secrets and exports. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Comma-separated API keys accepted besides those stored under DATA_DIR. */
  API_KEYS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter((k) => k.length > 0),
    )
    .refine((keys) => keys.every((k) => k.length >= 16), 'every key must be at least 16 characters long'),
  /** Name of the request header that carries the API key. */
  API_KEY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a valid HTTP header name')
    .default('X-SERVICE-KEY'),
  /** Graph store: `embedded` (in-process engine, data under DATA_DIR) or `neo4j`. */
  STORE: z.enum(['embedded', 'neo4j']).default('embedded'),
  /**
   * Neo4j address for STORE=neo4j: `neo4j://host:7687` routes (reads to followers and
   * read replicas of a cluster, writes to the leader); `bolt://host:7687` talks to one
   * server. `+s`/`+ssc` schemes encrypt.
   */
  NEO4J_URI: z
    .string()
    .regex(/^(neo4j|bolt)(\+s|\+ssc)?:\/\/[^\s]+$/, 'must be a neo4j:// or bolt:// URI')
    .optional(),
  /** Neo4j user. */
  NEO4J_USER: z.string().min(1).default('neo4j'),
  /** Neo4j password (required with STORE=neo4j). */
  NEO4J_PASSWORD: z.string().optional(),
  /** Neo4j database name (Community Edition has only `neo4j`). */
  NEO4J_DATABASE: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a database name')
    .default('neo4j'),
  /** Most connections the driver keeps per Neo4j server. */
  NEO4J_MAX_POOL_SIZE: intIn(1, 1000).default(100),
  /** Milliseconds a query may wait for a pooled connection before it fails with 503. */
  NEO4J_ACQUIRE_TIMEOUT_MS: intIn(100, 600_000).default(10_000),
  /** Milliseconds to establish a connection to a server. */
  NEO4J_CONNECT_TIMEOUT_MS: intIn(100, 600_000).default(5_000),
  /** Server-side time limit of one read transaction in milliseconds (0: the server's setting). */
  NEO4J_QUERY_TIMEOUT_MS: intIn(0, 86_400_000).default(30_000),
  /** Rows per transaction of `tiergraph import` into Neo4j (see the README on the choice). */
  NEO4J_IMPORT_BATCH: intIn(100, 100_000).default(5_000),
  /** Transactions of `tiergraph import` in flight at once on Neo4j (see the README). */
  NEO4J_IMPORT_PARALLEL: intIn(1, 16).default(2),
  /** Seconds between checks, by each server, for an import or seed made by another process. */
  NEO4J_GENERATION_POLL_S: intIn(1, 3600).default(10),
  /**
   * A server on Neo4j holds every relationship in memory (as EMBEDDED_WALK_MEMORY does; about
   * 470 MB at 1M companies), read from Neo4j in the background after start and after every
   * import it sees (and saved in DATA_DIR, so that a restart on the same data loads it), so
   * that tier-view exports walk there instead of asking Neo4j tier by tier.
   * Each export checks the database's generation first, so an import by another instance is
   * never walked stale; until the read is done, exports use frontier queries.
   */
  NEO4J_WALK_MEMORY: bool.default(true),
  /**
   * A server on Neo4j answers company profiles, edges with their evidence and list counterparts
   * from a point-read file (as EMBEDDED_POINT_READS does) written in DATA_DIR from one streamed
   * read of every profile and edge, after the walk memory's read, after start and after every
   * import it sees, unless the import wrote it (every import does, from its staging files, into
   * the DATA_DIR it runs with); a restart on the same data opens it. Like the search index and the read
   * cache, it follows the generation the server has seen: an import by another instance shows
   * at the next poll (NEO4J_GENERATION_POLL_S). Until the file is there, Neo4j answers.
   */
  NEO4J_POINT_READS: bool.default(true),
  /**
   * Answers smaller than this many bytes are sent uncompressed even to clients that accept
   * gzip or brotli: compressing a 1 KB profile cost about 45% more server CPU per request at
   * 1M companies to save some 500 bytes. Lists, exports, the OpenAPI document and the app's
   * files are larger and still compressed.
   */
  COMPRESS_MIN_BYTES: intIn(0, 1_073_741_824).default(4096),
  /** Requests a key may make per window before it gets 429. */
  RATE_LIMIT_MAX: intIn(1, 10_000_000).default(6000),
  /** Rate-limit window in seconds. */
  RATE_LIMIT_WINDOW_S: intIn(1, 86_400).default(60),
  /**
   * Redis URL that holds the rate-limit counters, so that several instances behind a
   * load balancer share one limit per key; unset: each process counts on its own.
   */
  RATE_LIMIT_REDIS_URL: z.string().min(1).optional(),
  /**
   * Refused keys (403) a client address may send per window before all its requests get 429. Requests
   * without a key (401) are not counted: they guess nothing, and any web page can make its visitors send them.
   */
  AUTH_FAILURE_MAX: intIn(1, 1_000_000).default(30),
  /** Window of AUTH_FAILURE_MAX in seconds. */
  AUTH_FAILURE_WINDOW_S: intIn(1, 86_400).default(300),
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Worker threads that answer company searches beside the main thread, over the same search index
   * in shared memory (no copy): a search costs about 2 ms of CPU at 1M companies, and one JavaScript
   * thread uses at most one core. Unset: one per core the process may use, at most 8 (at 1M
   * companies on 2 cores, 2 threads doubled the searches per second). 0: searches run on the main thread.
   */
  SEARCH_THREADS: intIn(0, 64).optional(),
  /** Load the generated demo dataset when the store is empty at start-up. */
  SEED_DEMO: bool.default(true),
  /** Number of companies of the demo dataset. */
  DEMO_COMPANIES: intIn(10, 5_000_000).default(20_000),
  /**
   * Buffer pool of the embedded engine in MiB (0: the engine's default, most of the RAM).
   * The operating system's page cache holds the rest of the graph files. Once the walk memory
   * and the point-read file are held, reads seldom reach the engine; the pool fills anyway
   * while they are read through it after an import, which made 1 GiB the largest part of the
   * serving process at its peak. At 1M companies 512 MiB took that peak from 2.98 to 2.43 GiB,
   * with reads and tier walks through the engine as fast as before (bench/README.md).
   */
  EMBEDDED_BUFFER_POOL_MB: intIn(0, 1_048_576).default(512),
  /**
   * Buffer pool of an embedded import in MiB (0: the engine's default, most of the RAM,
   * given back when the import ends). Loading the relationships of 1M companies needs
   * more than 1 GiB.
   */
  EMBEDDED_IMPORT_BUFFER_POOL_MB: intIn(0, 1_048_576).default(0),
  /**
   * An embedded import compresses the graph it loads. Off (the default), the engine's load of
   * 1M companies took 3–5 s less on 2 cores and its graph takes about 40% more disk (6.2 GB
   * against 4.4 GB); reads are the same either way.
   */
  EMBEDDED_IMPORT_COMPRESSION: bool.default(false),
  /**
   * A server on the embedded store holds every relationship in memory (about 470 MB at
   * 1M companies, read in the background after every import and saved beside the graph
   * for the next start) so that tier-view exports walk there instead of asking the engine
   * for every tier.
   */
  EMBEDDED_WALK_MEMORY: bool.default(true),
  /**
   * A server on the embedded store answers profiles, list counterparts and the companies
   * of paths, and edges with EMBEDDED_POINT_READS_EDGES, from a file written beside the
   * graph (`<generation>.point-reads`, kept for the next start) instead of one engine query
   * each. Every import writes it from its staging files while the engine loads them (the
   * CLI's too, for the servers on its DATA_DIR); a server that finds none reads it from the
   * engine in the background.
   */
  EMBEDDED_POINT_READS: bool.default(true),
  /**
   * The point-read file holds the edges with their evidence too, so an edge read is a file
   * read rather than an engine query: at 1M companies it took edge reads from a third of
   * /healthz's rate to about 0.6 (bench/README.md). The price, at 1M companies: the file is
   * 3.2 GB instead of 1.1 GB, and the import writes it in about 60 s beside the load (the
   * companies alone took 26-28 s outside an import); it keeps the edges' staged rows, and a read
   * maps its one row, about 10 microseconds more than reading a mapped one. A server that reads the file from the engine instead (after
   * a seed, or a lost file) writes mapped rows, 4.7 GB, in four to six minutes rather than 30 s:
   * the engine reads the whole evidence column for each range of edges it returns. Edges are
   * read from the engine until the file is there, or always when this is false. Turning it off
   * keeps a file written with the edges (its companies serve as before); turning it on writes
   * the file again.
   */
  EMBEDDED_POINT_READS_EDGES: bool.default(true),
  /**
   * Once a server holds its point-read file (EMBEDDED_POINT_READS, NEO4J_POINT_READS), it reads
   * the file through once in the background, so that the page cache holds it: a point read that
   * goes to the disk holds up the requests behind it. Skipped when the file is more than half the
   * memory available.
   */
  POINT_READS_WARM: bool.default(true),
  /** Connections the embedded adapter keeps open for concurrent queries. */
  EMBEDDED_CONNECTIONS: intIn(1, 64).default(4),
  /** Read results kept in memory between imports (0 turns the cache off). */
  READ_CACHE_ENTRIES: intIn(0, 10_000_000).default(20_000),
  /** Largest `limit` accepted by list and search endpoints. */
  MAX_PAGE_SIZE: intIn(1, 10_000).default(DEFAULT_LIMITS.maxPageSize),
  /** Largest `offset` accepted by list and search endpoints (deep paging is refused, not slow). */
  MAX_OFFSET: intIn(0, 10_000_000).default(DEFAULT_LIMITS.maxOffset),
  /** Largest GraphQL query depth. */
  GRAPHQL_MAX_DEPTH: intIn(2, 50).default(8),
  /** Largest estimated GraphQL query cost (list fields count as their `limit`). */
  GRAPHQL_MAX_COST: intIn(10, 10_000_000).default(20_000),
  /** Largest GraphQL document in lexical tokens; a longer one is refused while it is parsed. */
  GRAPHQL_MAX_TOKENS: intIn(100, 1_000_000).default(5_000),
  /** Milliseconds validating one GraphQL document may take before it is refused. */
  GRAPHQL_VALIDATE_MS: intIn(1, 60_000).default(100),
  /** Public base URL used in `next`/`previous` links; derived from the request when unset. */
  PUBLIC_URL: z.string().url().optional(),
  /** Secret that signs download links (32+ characters); generated and kept under DATA_DIR when unset. */
  DOWNLOAD_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Seconds a shutdown waits for responses still being sent before it closes their connections. */
  SHUTDOWN_GRACE_S: intIn(0, 600).default(10),
  /** Trust X-Forwarded-* headers from this many proxy hops (express `trust proxy`). */
  TRUST_PROXY: intIn(0, 10).default(0),
  /**
   * Comma-separated origins (`https://app.example.com`) whose browser pages may call
   * /v1 and /graphql from another origin (CORS). Unset: none; the app at / needs none.
   */
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o.length > 0),
    )
    .refine(
      (origins) => origins.every((o) => /^https?:\/\/[^/\s]+$/.test(o)),
      'every origin must be scheme://host[:port], without a path',
    ),
  /**
   * Where export jobs and their run records live: `embedded` (a SQLite file under
   * DATA_DIR), `mongodb` (MONGODB_URI), `postgres` (POSTGRES_URL) or `redis` (REDIS_URL).
   */
  JOBS_BACKEND: z.enum(['embedded', 'mongodb', 'postgres', 'redis']).default('embedded'),
  /** MongoDB connection string for JOBS_BACKEND=mongodb (the database is taken from the path). */
  MONGODB_URI: z.string().min(1).optional(),
  /** PostgreSQL connection string for JOBS_BACKEND=postgres. */
  POSTGRES_URL: z.string().min(1).optional(),
  /** Redis URL for JOBS_BACKEND=redis. */
  REDIS_URL: z.string().min(1).optional(),
  /** Run export jobs in this process (false: it only queues them for instances that share the jobs engine with true). */
  JOBS_WORKER: bool.default(true),
  /** Export jobs one process runs at once; later ones wait in the queue, in order. */
  JOBS_CONCURRENCY: intIn(1, 64).default(2),
  /** An export running longer than this many seconds ends TIMEDOUT. */
  JOB_TIMEOUT_S: intIn(1, 86_400).default(900),
  /**
   * A worker that stops renewing its hold on a job for this long (a crash) loses it,
   * and another worker, or the same one after a restart, takes the job up again.
   */
  JOB_LOCK_S: intIn(2, 3600).default(60),
  /** Most runs one API key may have pending or running at once; beyond it a start is refused (429 TOO_MANY_RUNS). */
  JOBS_MAX_QUEUED_PER_KEY: intIn(1, 10_000).default(20),
  /**
   * Bytes that export files may take in all; a run that would pass it ends FAILED.
   * Unset: with BLOB_STORE=local, a quarter of the space free on the export volume
   * at start-up; with gcs, no bound.
   */
  EXPORT_MAX_BYTES: z.coerce.number().int().min(1_000_000).max(Number.MAX_SAFE_INTEGER).optional(),
  /**
   * Bytes that the export files of one API key may take, within EXPORT_MAX_BYTES, so that one key's
   * exports cannot take the whole budget from the others; a run that would pass it ends FAILED.
   * Unset: half of EXPORT_MAX_BYTES. BLOB_STORE=local only.
   */
  EXPORT_MAX_BYTES_PER_KEY: z.coerce.number().int().min(1_000_000).max(Number.MAX_SAFE_INTEGER).optional(),
  /** How often idle workers look for queued jobs, in milliseconds. */
  JOBS_POLL_MS: intIn(50, 60_000).default(1000),
  /** Largest `num_tiers` accepted. */
  MAX_TIERS: intIn(1, 20).default(6),
  /** Where export files go: `local` (DATA_DIR/exports, served by the app) or `gcs`. */
  BLOB_STORE: z.enum(['local', 'gcs']).default('local'),
  /** Bucket for BLOB_STORE=gcs. */
  GCS_BUCKET: z.string().min(3).optional(),
  /**
   * Start of the object names of export files in GCS_BUCKET: deployments sharing a bucket each take
   * their own, since the clean-up deletes what is older than its retention under it.
   */
  GCS_PREFIX: z
    .string()
    .regex(
      /^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,127}\/){1,4}$/,
      'path segments of letters, digits, . _ - each ending in /',
    )
    .default('exports/'),
  /** Service-account key file for BLOB_STORE=gcs (application default credentials when unset). */
  GCS_KEY_FILE: z.string().min(1).optional(),
  /** Google Cloud project of the bucket. */
  GCS_PROJECT_ID: z.string().min(1).optional(),
  /** Lifetime of signed download links, in seconds (at most 7 days). */
  DOWNLOAD_TTL_S: intIn(1, 604_800).default(3600),
  /** Export files are deleted this many seconds after their job ends. */
  EXPORT_RETENTION_S: intIn(60, 31_536_000).default(86_400),
  /**
   * Hosts that may receive completion callbacks, comma-separated: `hooks.example.com`,
   * `*.example.com`, optionally with `:port`. Empty: `callback_url` is refused.
   */
  CALLBACK_HOSTS: z.string().default(''),
  /** Also accept plain-http callback URLs (for tests and private networks). */
  CALLBACK_ALLOW_HTTP: bool.default(false),
  /**
   * Post callbacks to public addresses only: a URL's IP address, and every address its host name resolves
   * to at each attempt, must not be loopback, private, link-local, carrier-grade NAT, multicast or reserved.
   */
  CALLBACK_PUBLIC_ONLY: bool.default(false),
  /** Secret that signs callbacks (32+ characters); generated and kept under DATA_DIR when unset. */
  CALLBACK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Attempts per callback delivery, the first included; retries are queued jobs and outlive restarts. */
  CALLBACK_MAX_ATTEMPTS: intIn(1, 50).default(10),
  /** Wait after the first failed callback attempt, in seconds; it doubles per failure; the wait is between half and all of that bound. */
  CALLBACK_RETRY_BASE_S: intIn(1, 86_400).default(10),
  /** Longest wait between callback attempts, in seconds, a receiver's Retry-After included. */
  CALLBACK_RETRY_MAX_S: intIn(1, 604_800).default(3600),
});

export type Config = z.infer<typeof schema> & { dataDir: string };

/** The names of every setting loadConfig reads (README's settings table lists them). */
export const SETTING_NAMES: readonly string[] = Object.keys(schema.shape);

/** Thrown when settings are invalid; `issues` lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates the settings. Empty strings count as unset so that
 * `FOO=` in an env file falls back to the default instead of failing. With
 * `files` false the files settings name are not read (settings meant for another
 * machine, such as a container's).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  { files = true }: { files?: boolean } = {},
): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = schema.safeParse(input);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  // Settings that other settings require, checked on the values as given (or their defaults) even
  // when some are bad on their own, so that one start reports every problem.
  const given = (key: keyof typeof schema.shape) => input[key] ?? '';
  for (const [setting, value, required] of REQUIRED_WITH)
    if (given(setting) === value && !given(required))
      problems.push(`${required}: required when ${setting}=${value}`);
  // The driver falls back on a database called "test" when the path names none.
  const mongo = given('MONGODB_URI');
  if (given('JOBS_BACKEND') === 'mongodb' && mongo && !/^mongodb(\+srv)?:\/\/[^/?]+\/[^/?]+/.test(mongo))
    problems.push(
      'MONGODB_URI: must name the database in its path (mongodb://host:27017/tiergraph); without one the driver would use "test"',
    );
  // The key signs every download link: one that cannot be read would fail each poll of a finished run.
  if (files && given('BLOB_STORE') === 'gcs' && input.GCS_KEY_FILE) {
    const problem = keyFileProblem(input.GCS_KEY_FILE);
    if (problem) problems.push(`GCS_KEY_FILE: ${problem}`);
  }
  try {
    parseCallbackHosts(given('CALLBACK_HOSTS'));
  } catch (e) {
    problems.push(`CALLBACK_HOSTS: ${(e as Error).message}`);
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const c = parsed.data;
  return { ...c, dataDir: path.resolve(c.DATA_DIR) };
}

/** Settings another setting's value requires: [setting, value, required]. */
const REQUIRED_WITH: [keyof typeof schema.shape, string, keyof typeof schema.shape][] = [
  ['JOBS_BACKEND', 'mongodb', 'MONGODB_URI'],
  ['JOBS_BACKEND', 'postgres', 'POSTGRES_URL'],
  ['JOBS_BACKEND', 'redis', 'REDIS_URL'],
  ['STORE', 'neo4j', 'NEO4J_URI'],
  ['STORE', 'neo4j', 'NEO4J_PASSWORD'],
  ['BLOB_STORE', 'gcs', 'GCS_BUCKET'],
];

/** Why a service-account key file cannot sign links, or null when it can be read as one. */
function keyFileProblem(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): ${file}`;
  }
  try {
    const key = JSON.parse(text) as { client_email?: unknown; private_key?: unknown };
    if (typeof key.client_email === 'string' && typeof key.private_key === 'string') return null;
  } catch {
    // Reported below.
  }
  return `is not a service-account key (JSON with client_email and private_key): ${file}`;
}

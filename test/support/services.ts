import { spawnSync } from 'node:child_process';
import { ROOT } from './paths';

/**
 * Where the integration tests find their database servers. Each URL comes from the
 * environment; for PostgreSQL and Redis a server on the default loopback address
 * (as `.ci/services.sh` sets it up) is used when one answers there. MongoDB has no
 * default: MONGODB_URI names it (`.ci/services.sh` exports the mongo-java-server stand-in it
 * starts).
 */

/** The role, password and database that `.ci/services.sh` creates. */
export const DEFAULT_POSTGRES_URL = 'postgres://tiergraph:tiergraph@127.0.0.1:5432/tiergraph_test';
/** Database 15, so that tests never touch the keys of a developer's database 0. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/15';

export const POSTGRES_HINT =
  'no PostgreSQL: set TEST_POSTGRES_URL=postgres://user:pass@host:port/db, or run `source .ci/services.sh` as root';
export const REDIS_HINT =
  'no Redis: set TEST_REDIS_URL=redis://host:port/db, or run `source .ci/services.sh` as root';
export const MONGO_HINT =
  'no MongoDB: run `source .ci/services.sh` (starts a MongoDB-wire server on 127.0.0.1:27017), or set MONGODB_URI=mongodb://host:port/database';

/** Whether this is a CI run: CI starts every service, so there a missing one is a failure, not a skip. */
export const inCi = (): boolean => process.env.CI === 'true' || process.env.CI === '1';

/**
 * Registers a suite or test as skipped with the reason in its name and printed, so that no skip is
 * silent: the one way the suites here skip (describeWithService, describeWithBrowser, itRaisingPriority).
 */
export function skipVisibly<F>(
  skip: (name: string, fn: F) => void,
  name: string,
  reason: string,
  fn: F,
): void {
  process.stderr.write(`skipping "${name}": ${reason}\n`);
  skip(`${name} (skipped: ${reason})`, fn);
}

// The probes run in a child process because test files register their suites
// synchronously: a describe callback cannot await a connection attempt.
const POSTGRES_PROBE = `
const { Client } = require('pg');
const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 2000 });
c.connect().then(() => c.query('SELECT 1')).then(() => c.end()).then(
  () => process.exit(0),
  (e) => { process.stderr.write(String(e && e.message)); process.exit(1); });
`;
const REDIS_PROBE = `
const { Redis } = require('ioredis');
const r = new Redis(process.argv[1], { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
let cause = null;
r.on('error', (e) => { cause = cause || e; });
r.connect().then(() => r.ping()).then(() => r.quit()).then(
  () => process.exit(0),
  (e) => { process.stderr.write(String((cause || e).message)); process.exit(1); });
`;

const probed = new Map<string, string | null>();

/** Null when `url` answers, else why not. Cached per test file. */
function probe(script: string, url: string): string | null {
  const key = `${script}\0${url}`;
  if (!probed.has(key)) {
    const r = spawnSync(process.execPath, ['-e', script, url], {
      cwd: ROOT,
      timeout: 8000,
      encoding: 'utf8',
    });
    probed.set(
      key,
      r.status === 0 ? null : r.stderr.trim() || (r.error?.message ?? `exit ${String(r.status)}`),
    );
  }
  return probed.get(key) ?? null;
}

function requiredService(envName: string, fallback: string, script: string, what: string): string | null {
  const fromEnv = process.env[envName];
  if (fromEnv) return fromEnv;
  const problem = probe(script, fallback);
  if (problem === null) return fallback;
  if (inCi()) {
    throw new Error(
      `${what} is required under CI=true but ${envName} is unset and ${fallback} does not answer (${problem}); ` +
        '.ci/run sources .ci/services.sh to install and start it',
    );
  }
  return null;
}

/** The PostgreSQL test database, or null (throws under CI=true, where it must exist). */
export function testPostgresUrl(): string | null {
  return requiredService('TEST_POSTGRES_URL', DEFAULT_POSTGRES_URL, POSTGRES_PROBE, 'PostgreSQL');
}

/** The Redis test database, or null (throws under CI=true, where it must exist). */
export function testRedisUrl(): string | null {
  return requiredService('TEST_REDIS_URL', DEFAULT_REDIS_URL, REDIS_PROBE, 'Redis');
}

/** MONGODB_URI, or null (throws under CI=true, where .ci/services.sh sets it). */
export function testMongoUrl(): string | null {
  const url = process.env.MONGODB_URI || null;
  if (url === null && inCi())
    throw new Error(`MongoDB is required under CI=true but MONGODB_URI is unset; ${MONGO_HINT}`);
  return url;
}

/**
 * `describe(name, ...)` over a service at `url`, or, when `url` is null, the same
 * suite registered as skipped with `reason` printed, so the skip is visible in the
 * output rather than silent. `fn` receives the URL; in the skipped case it gets ''
 * and must therefore connect only in hooks and tests, never while registering.
 */
export function describeWithService(
  name: string,
  url: string | null,
  reason: string,
  fn: (url: string) => void,
): void {
  if (url !== null) {
    describe(name, () => fn(url));
    return;
  }
  skipVisibly(describe.skip, name, reason, () => fn(''));
}

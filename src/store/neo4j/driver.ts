/**
 * The one module that names the Neo4j driver package: the driver's set-up, the
 * translation of parameters into driver values and of result values back into
 * the plain values the mappers take (numbers, strings, Dates, lists), and the
 * mapping of driver errors onto our error codes.
 */
import neo4j from 'neo4j-driver';
import type { Driver, Record as Neo4jRecord } from 'neo4j-driver';
import { AppError } from '../../domain/errors';
import { checkParams } from '../cypher-files';
import { isDate } from '../mappers';
import type { CypherQuery } from '../cypher-files';

export type { BookmarkManager, Driver, Session, ManagedTransaction } from 'neo4j-driver';

export interface Neo4jConnectionOptions {
  uri: string;
  user: string;
  password: string;
  maxPoolSize: number;
  acquireTimeoutMs: number;
  connectTimeoutMs: number;
}

/** A driver for a single server (`bolt://`) or a routed cluster (`neo4j://`). Opens no connection yet. */
export function createDriver(o: Neo4jConnectionOptions): Driver {
  return neo4j.driver(o.uri, neo4j.auth.basic(o.user, o.password), {
    maxConnectionPoolSize: o.maxPoolSize,
    connectionAcquisitionTimeout: o.acquireTimeoutMs,
    connectionTimeout: o.connectTimeoutMs,
    // Our integers (counts, status codes) are far below 2^53; plain numbers spare every caller Integer.
    disableLosslessIntegers: true,
    userAgent: 'tiergraph',
  });
}

/** Links the sessions that share it: each waits for the writes the others committed. */
export function createBookmarkManager(): ReturnType<typeof neo4j.bookmarkManager> {
  return neo4j.bookmarkManager();
}

export const READ = neo4j.session.READ;
export const WRITE = neo4j.session.WRITE;

/** A JavaScript Date as a Neo4j DATETIME in UTC (the driver's own conversion uses the local offset). */
export function utcDateTime(d: Date): InstanceType<typeof neo4j.types.DateTime> {
  return new neo4j.types.DateTime(
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds() * 1_000_000,
    0,
  );
}

/** A whole number the server must see as INTEGER (a plain JS number travels as FLOAT). */
export function integer(n: number): ReturnType<typeof neo4j.int> {
  return neo4j.int(n);
}

/**
 * The driver parameters of a call: checked against the query's header first
 * (`checkParams`), then INT64 as Neo4j integers (SKIP and LIMIT refuse floats)
 * and TIMESTAMP as UTC datetimes. Lists and maps pass as they are.
 */
export function toDriverParams(
  query: Pick<CypherQuery, 'name' | 'params'>,
  params: Record<string, unknown>,
): Record<string, unknown> {
  checkParams(query, params);
  const out: Record<string, unknown> = {};
  for (const [key, type] of query.params) {
    const value = params[key];
    if (type === 'INT64') out[key] = integer(value as number);
    else if (type === 'TIMESTAMP') out[key] = utcDateTime(value as Date);
    else out[key] = value;
  }
  return out;
}

/**
 * A result value as the mappers expect it: temporal values become Dates, nodes and
 * relationships their property maps, lists and maps are converted element by element.
 */
export function fromDriverValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(fromDriverValue);
  if (isDate(v)) return v;
  if (neo4j.isInt(v)) return (v as { toNumber(): number }).toNumber();
  if (neo4j.isDateTime(v) || neo4j.isLocalDateTime(v) || neo4j.isDate(v)) {
    return (v as { toStandardDate(): Date }).toStandardDate();
  }
  if (neo4j.isNode(v) || neo4j.isRelationship(v))
    return fromDriverValue((v as { properties: unknown }).properties);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = fromDriverValue(x);
  return out;
}

/** A record as a plain row keyed by column name. */
export function toRow(record: Neo4jRecord): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const key of record.keys) row[String(key)] = fromDriverValue(record.get(key));
  return row;
}

/** Seconds a client is asked to wait when the graph database cannot be reached. */
const GRAPH_RETRY_AFTER_S = 5;

/** Neo4j status codes that mean "the database cannot serve this now", not "the query is wrong". */
const UNAVAILABLE_CODES = [
  'ServiceUnavailable',
  'SessionExpired',
  'Neo.ClientError.Security.Unauthorized',
  'Neo.ClientError.Security.AuthenticationRateLimit',
  'Neo.ClientError.Database.DatabaseNotFound',
  'Neo.ClientError.Cluster.NotALeader',
  'Neo.ClientError.Transaction.TransactionTimedOut',
  'Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration',
];

/**
 * The driver's pool gave no connection within NEO4J_ACQUIRE_TIMEOUT_MS: every connection busy, or
 * a database that takes connections but does not answer them (one starting, hung or cut off
 * behind a proxy). The driver gives this error no status code (`N/A`) and does not retry it;
 * only its message tells it apart.
 */
function isAcquisitionTimeout(e: Error, code: string): boolean {
  return code === 'N/A' && e.message.startsWith('Connection acquisition timed out');
}

/**
 * Maps a driver failure onto our error codes: an unreachable, overloaded or
 * misconfigured database (a pool that gives no connection in time included), and a query over
 * its time limit, are 503 UNAVAILABLE
 * (the client may retry; the operator sees the cause in the log). Anything else
 * (a query the server rejects) is a defect of ours and stays a 500.
 */
export function mapDriverError(e: unknown, queryName: string): unknown {
  if (!(e instanceof Error) || e instanceof AppError) return e;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return e;
  const retryable = (e as { retryable?: unknown }).retryable === true;
  if (
    retryable ||
    code.startsWith('Neo.TransientError.') ||
    UNAVAILABLE_CODES.includes(code) ||
    isAcquisitionTimeout(e, code)
  ) {
    const timedOut = code.includes('TransactionTimedOut') || code.includes('Transaction.LockClientStopped');
    // Only an outage passes by itself, so only it says when to come back: a query over its time
    // limit would run over it again.
    const err = timedOut
      ? new AppError(
          'UNAVAILABLE',
          'The graph database did not answer in time; try again or narrow the request.',
        )
      : new AppError(
          'UNAVAILABLE',
          'The graph database is unavailable; try again shortly.',
          [],
          GRAPH_RETRY_AFTER_S,
        );
    (err as { cause?: unknown }).cause = e;
    (err as { query?: string }).query = queryName;
    return err;
  }
  return e;
}

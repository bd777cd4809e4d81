import { PostgresBackend } from '@agendajs/postgres-backend';
import type { PostgresBackendConfig } from '@agendajs/postgres-backend';
import { Pool } from 'pg';
import { withoutCredentials } from '../../../domain/hosts';
import { atMostEvery } from '../../../logger';
import type { Logger } from '../../../logger';
import type { JobsEngine } from '../jobs-engine';
import { unavailableWhenUnreachable } from '../unreachable';
import { PostgresRunStore } from './postgres.run-store';

/**
 * Agenda's PostgreSQL backend creates its tables with CREATE ... IF NOT EXISTS on
 * connect. Two processes starting at once on an empty database both pass the check
 * and one fails on the catalog's unique index; holding an advisory lock across the
 * connect makes the second wait, then find the tables there.
 */
class SchemaLockedPostgresBackend extends PostgresBackend {
  constructor(
    private readonly lockPool: Pool,
    config: PostgresBackendConfig,
  ) {
    super(config);
  }

  override async connect(): Promise<void> {
    const client = await this.lockPool.connect();
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', ['tiergraph-jobs-schema']);
      try {
        await super.connect();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['tiergraph-jobs-schema']);
      }
    } finally {
      client.release();
    }
  }
}

/** Error codes of the driver and the server that mean the database cannot be reached (or no longer can). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // The server is shutting down or starting up, or an administrator ended the session.
  '57P01',
  '57P02',
  '57P03',
]);

/** Whether a failure of the pool means the database does not answer (rather than a bad query). */
export function postgresUnreachable(e: unknown): boolean {
  // Not `instanceof Error`: a socket's errors are made by node itself, in another realm under a test runner.
  if (typeof e !== 'object' || e === null) return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  // pg's own words for a connection lost under a query, or none made in time.
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
      message,
    )
  );
}

/** How long taking a connection from the pool may wait for the server (pg waits for ever by default). */
const CONNECT_TIMEOUT_MS = 5000;

/** Jobs and runs in one PostgreSQL database, one pool for both. */
export function openPostgresJobsEngine(url: string, log: Logger): JobsEngine {
  const pool = new Pool({ connectionString: url, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection that the server drops is reported on the pool, which replaces it; unheard,
  // that event would end the process. The next query that needs the database fails on its own.
  pool.on(
    'error',
    atMostEvery(60_000, (dropped, e: Error) =>
      log.warn({ err: e, ...(dropped > 0 ? { dropped } : {}) }, 'jobs database connection lost'),
    ),
  );
  return {
    agendaBackend: new SchemaLockedPostgresBackend(pool, {
      pool,
      tableName: 'tiergraph_jobs',
      channelName: 'tiergraph_jobs',
    }),
    runs: unavailableWhenUnreachable(new PostgresRunStore({ pool }), postgresUnreachable),
    open: async () => {
      try {
        await pool.query('SELECT 1');
      } catch (e) {
        throw new Error(
          `PostgreSQL (JOBS_BACKEND=postgres) cannot be used at ${withoutCredentials(url)}: ${(e as Error).message}`,
          { cause: e },
        );
      }
    },
    close: () => pool.end(),
  };
}

import { PostgresBackend } from '@agendajs/postgres-backend';
import type { PostgresBackendConfig } from '@agendajs/postgres-backend';
import { Pool } from 'pg';
import { withoutCredentials } from '../../../domain/hosts';
import { logAtMostEvery } from '../../../logger';
import type { Logger } from '../../../logger';
import type { JobsEngine } from '../jobs-engine';
import { unavailableWhenUnreachable, unreachableBy } from '../unreachable';
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

/**
 * Whether a failure of the pool means the database does not answer: the server shutting down or
 * starting up, or an administrator ending the session (57P01-03), a connection exception (08xxx),
 * or pg's own words for a connection lost under a query or none made in time.
 */
const postgresUnreachable = unreachableBy(
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/,
  (code) => code.startsWith('08') || /^57P0[123]$/.test(code),
);

/** How long taking a connection from the pool may wait for the server (pg waits for ever by default). */
const CONNECT_TIMEOUT_MS = 5000;

/** Jobs and runs in one PostgreSQL database, one pool for both. */
export function openPostgresJobsEngine(url: string, log: Logger): JobsEngine {
  const pool = new Pool({ connectionString: url, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection that the server drops is reported on the pool, which replaces it; unheard,
  // that event would end the process. The next query that needs the database fails on its own.
  const warn = logAtMostEvery(60_000, log);
  pool.on('error', (e) => warn(e, 'jobs database connection lost'));
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

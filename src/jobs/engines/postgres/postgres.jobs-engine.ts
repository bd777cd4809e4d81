import { PostgresBackend } from '@agendajs/postgres-backend';
import type { PostgresBackendConfig } from '@agendajs/postgres-backend';
import { Pool } from 'pg';
import type { JobsEngine } from '../jobs-engine';
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

/** Jobs and runs in one PostgreSQL database, one pool for both. */
export function openPostgresJobsEngine(url: string): JobsEngine {
  const pool = new Pool({ connectionString: url, max: 10 });
  return {
    agendaBackend: new SchemaLockedPostgresBackend(pool, {
      pool,
      tableName: 'tiergraph_jobs',
      channelName: 'tiergraph_jobs',
    }),
    runs: new PostgresRunStore({ pool }),
    close: () => pool.end(),
  };
}

import { PostgresBackend } from '@agendajs/postgres-backend';
import { Pool } from 'pg';
import type { JobsEngine } from '../jobs-engine';
import { PostgresRunStore } from './postgres.run-store';

/** Jobs and runs in one PostgreSQL database, one pool for both. */
export function openPostgresJobsEngine(url: string): JobsEngine {
  const pool = new Pool({ connectionString: url, max: 10 });
  return {
    agendaBackend: new PostgresBackend({ pool, tableName: 'tiergraph_jobs', channelName: 'tiergraph_jobs' }),
    runs: new PostgresRunStore({ pool }),
    close: () => pool.end(),
  };
}

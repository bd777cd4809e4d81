import path from 'node:path';
import fs from 'node:fs';
import type { AgendaBackend } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend } from '@agendajs/postgres-backend';
import { RedisBackend } from '@agendajs/redis-backend';
import { MongoClient } from 'mongodb';
import { Pool } from 'pg';
import { Redis } from 'ioredis';
import type { Config } from '../config/env';
import { SqliteJobBackend, openSqliteFile } from './backends/sqlite.backend';
import type { RunStore } from './run-store';
import { MongoRunStore } from './run-stores/mongo.run-store';
import { PostgresRunStore } from './run-stores/postgres.run-store';
import { RedisRunStore } from './run-stores/redis.run-store';
import { SqliteRunStore } from './run-stores/sqlite.run-store';

export interface JobsBackend {
  backend: AgendaBackend;
  runs: RunStore;
  /** Closes connections the backend and the run store share. */
  close(): Promise<void>;
}

/**
 * The queue backend and the run store of JOBS_BACKEND, sharing one connection
 * (one SQLite file, one pool, one client) so jobs and run records live together.
 */
export function createJobsBackend(
  config: Pick<Config, 'JOBS_BACKEND' | 'MONGODB_URI' | 'POSTGRES_URL' | 'REDIS_URL' | 'dataDir'>,
): JobsBackend {
  switch (config.JOBS_BACKEND) {
    case 'embedded': {
      const dir = path.join(config.dataDir, 'jobs');
      fs.mkdirSync(dir, { recursive: true });
      const db = openSqliteFile(path.join(dir, 'jobs.sqlite'));
      return {
        backend: new SqliteJobBackend({ db }),
        runs: new SqliteRunStore({ db }),
        close: () => Promise.resolve(void db.close()),
      };
    }
    case 'postgres': {
      const pool = new Pool({ connectionString: config.POSTGRES_URL!, max: 10 });
      return {
        backend: new PostgresBackend({ pool, tableName: 'tiergraph_jobs', channelName: 'tiergraph_jobs' }),
        runs: new PostgresRunStore({ pool }),
        close: () => pool.end(),
      };
    }
    case 'redis': {
      const redis = new Redis(config.REDIS_URL!, { maxRetriesPerRequest: null });
      return {
        backend: new RedisBackend({ redis, keyPrefix: 'tiergraph:jobs:', channelName: 'tiergraph:jobs' }),
        runs: new RedisRunStore({ client: redis }),
        close: async () => void (await redis.quit()),
      };
    }
    case 'mongodb': {
      const client = new MongoClient(config.MONGODB_URI!);
      const db = client.db();
      return {
        backend: new MongoBackend({ mongo: db, collection: 'tiergraph_jobs' }),
        runs: new MongoRunStore({ db }),
        close: () => client.close(),
      };
    }
  }
}

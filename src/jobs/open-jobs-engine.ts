import type { Config } from '../config/env';
import type { Logger } from '../logger';
import type { JobsEngine } from './engines/jobs-engine';
import { openMongodbJobsEngine } from './engines/mongodb/mongodb.jobs-engine';
import { openPostgresJobsEngine } from './engines/postgres/postgres.jobs-engine';
import { openRedisJobsEngine } from './engines/redis/redis.jobs-engine';
import { openSqliteJobsEngine } from './engines/sqlite/sqlite.jobs-engine';

/** The settings that choose and reach the jobs engine. */
export type JobsEngineConfig = Pick<
  Config,
  'JOBS_BACKEND' | 'MONGODB_URI' | 'POSTGRES_URL' | 'REDIS_URL' | 'dataDir'
>;

/** The jobs engine JOBS_BACKEND names; config validation guarantees its URL is set. */
export function openJobsEngine(config: JobsEngineConfig, log: Logger): JobsEngine {
  switch (config.JOBS_BACKEND) {
    case 'embedded':
      return openSqliteJobsEngine(config.dataDir);
    case 'postgres':
      return openPostgresJobsEngine(config.POSTGRES_URL!, log);
    case 'redis':
      return openRedisJobsEngine(config.REDIS_URL!, log);
    case 'mongodb':
      return openMongodbJobsEngine(config.MONGODB_URI!);
  }
}

import { RedisBackend } from '@agendajs/redis-backend';
import { Redis } from 'ioredis';
import type { JobsEngine } from '../jobs-engine';
import { RedisRunStore } from './redis.run-store';

/** Jobs and runs in one Redis database, one client for both. */
export function openRedisJobsEngine(url: string): JobsEngine {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  return {
    agendaBackend: new RedisBackend({ redis, keyPrefix: 'tiergraph:jobs:', channelName: 'tiergraph:jobs' }),
    runs: new RedisRunStore({ client: redis }),
    close: async () => void (await redis.quit()),
  };
}

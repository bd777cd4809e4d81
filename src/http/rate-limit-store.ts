import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Store } from 'express-rate-limit';

/**
 * Rate-limit counters in Redis, shared by every instance that names the same
 * server, so a key's limit holds across a load balancer instead of per process.
 */
export function redisRateLimitStore(url: string): { store: Store; close: () => Promise<void> } {
  const client = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
  const store = new RedisStore({
    prefix: 'tiergraph:rl:',
    sendCommand: (command: string, ...args: string[]) =>
      client.call(command, ...args) as Promise<number | string | (number | string)[]>,
  });
  return {
    store,
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Store } from 'express-rate-limit';

/**
 * Rate-limit counters in Redis, shared by every instance that names the same
 * server, so a key's limit holds across a load balancer instead of per process:
 * requests per key (`store`) and failed authentications per address (`authFailures`).
 */
export function redisRateLimitStore(url: string): {
  store: Store;
  authFailures: Store;
  close: () => Promise<void>;
} {
  const client = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
  const storeWith = (prefix: string) =>
    new RedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) =>
        client.call(command, ...args) as Promise<number | string | (number | string)[]>,
    });
  return {
    store: storeWith('tiergraph:rl:'),
    authFailures: storeWith('tiergraph:rl-auth:'),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

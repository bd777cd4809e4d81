import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Store } from 'express-rate-limit';
import type { Logger } from '../logger';

/**
 * Rate-limit counters in Redis, shared by every instance that names the same
 * server, so a key's limit holds across a load balancer instead of per process:
 * requests per key (`store`) and failed authentications per address (`authFailures`).
 */
export function redisRateLimitStore(
  url: string,
  log?: Pick<Logger, 'warn' | 'info'>,
): {
  store: Store;
  authFailures: Store;
  close: () => Promise<void>;
} {
  // While Redis is out of reach a command fails at the first failed reconnection instead of waiting
  // for more: requests then go on unlimited at once (see keyRateLimit), not seconds later.
  const client = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: true });
  // Without a listener ioredis prints every failed reconnection to stderr; one line an outage is enough.
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log?.warn(
      { err: err.message },
      'Redis of the shared rate limits (RATE_LIMIT_REDIS_URL) out of reach; reconnecting',
    );
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log?.info('Redis of the shared rate limits is back');
  });
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

import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Store } from 'express-rate-limit';
import type { Logger } from '../logger';

/** The longest a request waits for a counter before it goes on without one. */
const COMMAND_TIMEOUT_MS = 1000;
/** The longest a close waits for Redis to end the connection before the socket is destroyed. */
const DISCONNECT_TIMEOUT_MS = 100;

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
  // A command sent before the first connection waits for it (or fails at the first failed attempt).
  // Once connected, a command sent while Redis is out of reach fails at once instead of waiting for
  // the client's next attempt to reconnect (up to 2 s apart once an outage lasts): requests then go
  // on unlimited at once (see keyRateLimit), not seconds later. A Redis that holds a connection
  // without answering costs a request at most COMMAND_TIMEOUT_MS.
  // Closed while Redis is out of reach, the client waited for its socket's end (a socket already
  // closed, whose end never comes) for `disconnectTimeout`, 2 s by default, and its CLIENT SETINFO
  // commands of a connection dropped at once timed out a second later, each keeping the process up:
  // a stopping server stayed 2–4 s. Those commands only label the connection on Redis 7.2 and later.
  const client = new Redis(url, {
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    disableClientInfo: true,
  });
  let connectedOnce = false;
  client.once('ready', () => {
    connectedOnce = true;
  });
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
        connectedOnce && client.status !== 'ready'
          ? Promise.reject(new Error('Redis of the shared rate limits is out of reach'))
          : (client.call(command, ...args) as Promise<number | string | (number | string)[]>),
    });
  return {
    store: storeWith('tiergraph:rl:'),
    authFailures: storeWith('tiergraph:rl-auth:'),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

import { RedisBackend } from '@agendajs/redis-backend';
import { Redis } from 'ioredis';
import { withoutCredentials } from '../../../domain/hosts';
import { atMostEvery } from '../../../logger';
import type { Logger } from '../../../logger';
import type { JobsEngine } from '../jobs-engine';
import { unavailableWhenUnreachable } from '../unreachable';
import { RedisRunStore } from './redis.run-store';

/** How long a start waits for Redis to answer before it gives up with the reason. */
const OPEN_TIMEOUT_MS = 5000;

/** Whether a failure of the run store's client means Redis does not answer (rather than a bad command). */
export function redisUnreachable(e: unknown): boolean {
  // Not `instanceof Error`: a socket's errors are made by node itself, in another realm under a test runner.
  if (typeof e !== 'object' || e === null) return false;
  const { name, code, message } = e as { name?: unknown; code?: unknown; message?: unknown };
  if (name === 'MaxRetriesPerRequestError') return true;
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code)
  )
    return true;
  // ioredis's words for a command refused while it has no connection.
  return typeof message === 'string' && /enableOfflineQueue|Connection is closed/.test(message);
}

/**
 * Jobs and runs in one Redis database. Agenda's client holds its commands while Redis is away (its
 * polls wait and go on when it is back); the run store has a client of its own whose commands fail
 * after one failed attempt to reconnect, so that a client polling its run is told 503 within
 * seconds rather than kept waiting.
 */
export function openRedisJobsEngine(url: string, log: Logger): JobsEngine {
  const warn = atMostEvery(60_000, (dropped, e: Error) =>
    log.warn({ err: e, ...(dropped > 0 ? { dropped } : {}) }, 'jobs database (Redis) does not answer'),
  );
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  // A command waits for a connection being made, but fails once an attempt to make one has failed.
  const runsClient = new Redis(url, { maxRetriesPerRequest: 1 });
  let lastError: Error | null = null;
  // ioredis reconnects by itself; unheard, each failed attempt is printed as an unhandled error.
  for (const client of [redis, runsClient])
    client.on('error', (e: Error) => {
      lastError = e;
      warn(e);
    });
  return {
    agendaBackend: new RedisBackend({ redis, keyPrefix: 'tiergraph:jobs:', channelName: 'tiergraph:jobs' }),
    runs: unavailableWhenUnreachable(new RedisRunStore({ client: runsClient }), redisUnreachable),
    open: async () => {
      const ready = (client: Redis) =>
        client.status === 'ready'
          ? Promise.resolve()
          : // Not events.once, which gives up at the first failed attempt: the client tries again.
            new Promise<void>((resolve) => client.once('ready', () => resolve()));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), OPEN_TIMEOUT_MS);
      });
      const outcome = await Promise.race([Promise.all([ready(redis), ready(runsClient)]), late]);
      clearTimeout(timer);
      if (outcome === 'late')
        throw new Error(
          `Redis (JOBS_BACKEND=redis) does not answer at ${withoutCredentials(url)}` +
            `${lastError ? `: ${lastError.message}` : ''}`,
        );
    },
    close: async () => {
      await Promise.all([redis, runsClient].map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}

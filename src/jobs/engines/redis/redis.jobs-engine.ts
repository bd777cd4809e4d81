import { RedisBackend } from '@agendajs/redis-backend';
import { Redis } from 'ioredis';
import { withoutCredentials } from '../../../domain/hosts';
import { logAtMostEvery } from '../../../logger';
import type { Logger } from '../../../logger';
import type { JobsEngine } from '../jobs-engine';
import { unavailableWhenUnreachable, unreachableBy } from '../unreachable';
import { RedisRunStore } from './redis.run-store';

/** How long a start waits for Redis to answer before it gives up with the reason. */
const OPEN_TIMEOUT_MS = 5000;

/**
 * Whether a failure of the run store's client means Redis does not answer: ioredis's words for a
 * command given up after a failed attempt to reconnect, or sent on a connection that closed.
 */
const redisUnreachable = unreachableBy(/Reached the max retries per request limit|Connection is closed/);

/**
 * Jobs and runs in one Redis database. Agenda's client holds its commands while Redis is away (its
 * polls wait and go on when it is back); the run store has a client of its own whose commands fail
 * after one failed attempt to reconnect, so that a client polling its run is told 503 within
 * seconds rather than kept waiting.
 */
export function openRedisJobsEngine(url: string, log: Logger): JobsEngine {
  const warn = logAtMostEvery(60_000, log);
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  // A command waits for a connection being made, but fails once an attempt to make one has failed.
  const runsClient = new Redis(url, { maxRetriesPerRequest: 1 });
  let lastError: Error | null = null;
  // ioredis reconnects by itself; unheard, each failed attempt is printed as an unhandled error.
  for (const client of [redis, runsClient])
    client.on('error', (e: Error) => {
      lastError = e;
      warn(e, 'jobs database (Redis) does not answer');
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

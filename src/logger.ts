import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/**
 * The one logger. Modules take a child (`logger.child({ module })`). API keys
 * and secrets never reach the output: the header and known fields are redacted.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'tiergraph' },
    redact: {
      paths: [
        'req.headers["x-service-key"]',
        'req.headers.authorization',
        '*.apiKey',
        '*.secret',
        '*.password',
      ],
      censor: '[redacted]',
    },
  });
}

/**
 * `f`, called at most once per `ms`; calls in between are dropped and counted, and the next call
 * gets the count. For problems that recur with every request or poll while a service is down: a
 * line each time would flood the log and hide what else it says.
 */
export function atMostEvery<A extends unknown[]>(
  ms: number,
  f: (dropped: number, ...args: A) => void,
  now: () => number = Date.now,
): (...args: A) => void {
  let last = -Infinity;
  let dropped = 0;
  return (...args) => {
    const t = now();
    if (t - last < ms) {
      dropped++;
      return;
    }
    last = t;
    const n = dropped;
    dropped = 0;
    f(n, ...args);
  };
}

/**
 * A failure that recurs while a service is down, logged at most once per `ms` with how many were
 * dropped since the last line: `(err, msg)`, the message given per call or once here.
 */
export function logAtMostEvery(
  ms: number,
  log: Pick<Logger, 'warn' | 'error'>,
  level: 'warn' | 'error' = 'warn',
): (err: unknown, msg: string) => void {
  return atMostEvery(ms, (dropped, err: unknown, msg: string) =>
    log[level]({ err, ...(dropped > 0 ? { dropped } : {}) }, msg),
  );
}

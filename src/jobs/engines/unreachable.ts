import { AppError } from '../../domain/errors';
import type { RunStore } from '../run-store';

/** Seconds a client is asked to wait when the jobs database does not answer. */
const RETRY_AFTER_S = 5;

/**
 * The run store, with the failures that mean its database cannot be reached (`unreachable` tells
 * them apart from the rest) turned into 503 UNAVAILABLE, as the graph store's are: a client polling
 * its run during a database's failover is told to come back, not that the server failed.
 */
export function unavailableWhenUnreachable(runs: RunStore, unreachable: (e: unknown) => boolean): RunStore {
  const translate = (e: unknown): never => {
    if (unreachable(e))
      throw new AppError(
        'UNAVAILABLE',
        'The jobs database does not answer; try again shortly.',
        [],
        RETRY_AFTER_S,
      );
    throw e;
  };
  return new Proxy(runs, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver) as unknown;
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        const result = (member as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise ? result.catch(translate) : result;
      };
    },
  });
}

/** Socket error codes that mean a server cannot be reached, or no longer can. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * An engine's test of "its database does not answer" (rather than a bad query): a socket error
 * code, one of the driver's own `codes`, or the driver's own `words` for it. Reads `code` and
 * `message`, not `instanceof Error`: the errors node makes for a socket are of another realm under
 * a test runner.
 */
export function unreachableBy(
  words: RegExp,
  codes: (code: string) => boolean = () => false,
): (e: unknown) => boolean {
  return (e) => {
    if (typeof e !== 'object' || e === null) return false;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || codes(code))) return true;
    return typeof message === 'string' && words.test(message);
  };
}

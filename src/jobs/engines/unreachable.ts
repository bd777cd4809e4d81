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

import { isDiskFull } from '../disk-full';
import type { Logger } from '../logger';
import type { DerivedFileOf, LoadAlongside } from './graph-store';

/**
 * Runs a store's `alongside` work (see GraphStore.replaceAll) for the data being loaded. Never
 * rejects: a failure of the work is logged, and whatever it would have derived is derived later by
 * the servers; an abort (the load failed) is not reported.
 */
export async function runLoadAlongside(
  alongside: LoadAlongside | undefined,
  stagingDir: string,
  derivedFile: DerivedFileOf,
  signal: AbortSignal,
  logger: Logger | undefined,
): Promise<void> {
  if (!alongside) return;
  try {
    await alongside(stagingDir, derivedFile, signal);
  } catch (err) {
    if (signal.aborted) return;
    // The load may still end well: the graph is then replaced, but its servers derive these files at
    // their start, which wants the same room. Said in so many words, not left to the error's text.
    if (isDiskFull(err))
      logger?.warn(
        { err },
        'the disk ran out of room for the data derived while loading; servers derive it at their start, which needs that room too: free some',
      );
    else logger?.warn({ err }, 'could not prepare derived data while loading; it is derived later');
  }
}

/**
 * The works given (undefined ones left out) run at once as one, which ends when every one of them
 * has: a failure of one does not stop the others, and the first failure is the whole's.
 */
export function together(...works: (LoadAlongside | undefined)[]): LoadAlongside | undefined {
  const given = works.filter((w): w is LoadAlongside => w !== undefined);
  if (given.length <= 1) return given[0];
  return async (stagingDir, derivedFile, signal) => {
    const ended = await Promise.allSettled(given.map((w) => w(stagingDir, derivedFile, signal)));
    const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
    if (failed) throw failed.reason;
  };
}

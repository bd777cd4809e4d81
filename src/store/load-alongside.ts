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
    if (!signal.aborted)
      logger?.warn({ err }, 'could not prepare derived data while loading; it is derived later');
  }
}

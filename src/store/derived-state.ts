/**
 * Where a piece of data a server derives from the graph (and keeps in the background) stands for
 * the data as it is now: `off` (not kept), `building` (a read or write under way), `ready`, or
 * `unavailable` (it could not be made, or is not started yet: the store answers meanwhile).
 */
export type DerivedState = 'off' | 'building' | 'ready' | 'unavailable';

/** A background read of derived data for one store generation; `settled` once it ended, either way. */
export interface GenerationRead<T> {
  generation: number;
  done: Promise<T | null>;
  settled: boolean;
  /** When it failed (Date.now()), if it did. */
  failedAt?: number;
}

/**
 * How long a failed read of a generation stands before the next ask starts it again: a database back
 * from an outage would otherwise leave the data underived (and reads slower) until the data changed.
 */
export const RETRY_FAILED_MS = 60_000;

/**
 * `running` when it is for `generation` (and has not failed more than RETRY_FAILED_MS ago); otherwise
 * `start(generation)`, tracked. A failure ends in null and goes to `failed` only while `generation`
 * is still `current()` (work the data changed under has nothing to report).
 */
export function oncePerGeneration<T>(
  running: GenerationRead<T> | null,
  generation: number,
  current: () => number,
  start: (generation: number) => Promise<T | null>,
  failed: (err: unknown, generation: number) => void,
): GenerationRead<T> {
  if (
    running?.generation === generation &&
    !(running.failedAt !== undefined && Date.now() - running.failedAt >= RETRY_FAILED_MS)
  )
    return running;
  const read: GenerationRead<T> = { generation, done: Promise.resolve(null), settled: false };
  read.done = start(generation)
    .catch((err: unknown) => {
      read.failedAt = Date.now();
      if (current() === generation) failed(err, generation);
      return null;
    })
    .finally(() => {
      read.settled = true;
    });
  return read;
}

/** The state of data kept when `on`, `held` for the generation now, read by `read` if any. */
export function derivedState(
  on: boolean,
  held: boolean,
  read: { generation: number; settled: boolean } | null,
  generation: number,
): DerivedState {
  if (!on) return 'off';
  if (held) return 'ready';
  return read?.generation === generation && !read.settled ? 'building' : 'unavailable';
}

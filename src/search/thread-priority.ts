/**
 * The priority (nice value) of the calling thread, which on Linux is a thread's own: the search
 * index's build thread gives way to an import's staging at the lowest priority, and it and its typo
 * thread take their priority back afterwards.
 */
import os from 'node:os';

/**
 * Whether this thread may raise its priority again once lowered, which takes a privilege on Linux
 * (or an RLIMIT_NICE that allows it): found by a step down and back. Where the step back fails the
 * thread stays one step down, which changes nothing. Elsewhere than Linux: false.
 */
export function mayRaisePriority(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const before = os.getPriority(0);
    os.setPriority(0, Math.min(before + 1, os.constants.priority.PRIORITY_LOW));
    os.setPriority(0, before);
    return true;
  } catch {
    return false;
  }
}

/** Sets this thread's nice value; false where it may not. */
export function setThreadPriority(nice: number): boolean {
  try {
    os.setPriority(0, nice);
    return true;
  } catch {
    return false;
  }
}

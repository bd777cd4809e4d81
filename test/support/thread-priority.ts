import fs from 'node:fs';
import os from 'node:os';

/**
 * Whether this process may raise a thread's priority again, which a build fed by an import needs
 * (see feedSearchIndex): Linux, as root or with an RLIMIT_NICE for it. Found as the build thread
 * finds it, by a step down and back, here on the calling thread.
 */
export function mayRaisePriority(): boolean {
  if (process.platform !== 'linux') return false;
  const before = os.getPriority(0);
  try {
    os.setPriority(0, before + 1);
    os.setPriority(0, before);
    return true;
  } catch {
    return false;
  }
}

/** The nice value of each thread of this process (Linux, where a nice value is a thread's own). */
export function threadNices(): number[] {
  return fs.readdirSync('/proc/self/task').flatMap((t) => {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

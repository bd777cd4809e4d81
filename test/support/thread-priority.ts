import fs from 'node:fs';
import { inCi, skipVisibly } from './services';

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

const PRIORITY_HINT =
  'this process may not raise a thread priority again once lowered (needs root, CAP_SYS_NICE or an RLIMIT_NICE of 20 or more)';

/**
 * `it` for a test that needs threads to take their priority back (see mayRaisePriority). Where
 * they may not, the test is registered as skipped with the reason printed; under CI=true, where
 * nothing skips, it is registered and fails with that reason.
 */
export function itRaisingPriority(
  mayRaise: boolean,
  name: string,
  fn: () => Promise<void>,
  timeout?: number,
): void {
  if (mayRaise) {
    it(name, fn, timeout);
    return;
  }
  if (inCi()) {
    it(name, () => {
      throw new Error(`required under CI=true: ${PRIORITY_HINT}`);
    });
    return;
  }
  skipVisibly(it.skip, name, PRIORITY_HINT, fn);
}

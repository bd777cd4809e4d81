import fs from 'node:fs';

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

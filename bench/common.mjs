// What the small benchmark scripts (import.mjs, tierview.mjs) share: where the
// repository and the built CLI are, their `--name value` arguments, the median.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** `--name value` pairs of the command line, by name (values are strings). */
export function parseArgs(argv = process.argv.slice(2)) {
  return Object.fromEntries(
    argv
      .join(' ')
      .split('--')
      .filter(Boolean)
      .map((a) => a.trim().split(/\s+/)),
  );
}

/** The lower median of a list of numbers. */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

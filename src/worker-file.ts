import { existsSync } from 'node:fs';

/**
 * Whether the worker script `file` (a compiled module's sibling, by its full path) can be started:
 * the code runs compiled and the script is there. From the TypeScript sources (jest), this module is
 * not a `.js` file and no worker script exists beside the sources, so the work stays on the calling
 * thread; tests that need a worker transpile the sources first (test/support/compiled-sources.ts).
 */
export function workerFileAvailable(file: string): boolean {
  return __filename.endsWith('.js') && existsSync(file);
}

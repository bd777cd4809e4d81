import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A fresh temporary directory owned by one test file: inside the run's own (test-run-temp.js), which
 * goes when the run passes, so a test need not remove it; in the system's when run outside jest.
 */
export function tempDir(prefix: string): string {
  const run = process.env.TIERGRAPH_TEST_RUN_TMP;
  const base = run !== undefined && fs.existsSync(run) ? run : os.tmpdir();
  return fs.mkdtempSync(path.join(base, `tiergraph-${prefix}-`));
}

export function readSeed(name: string): string {
  return fs.readFileSync(path.join(ROOT, 'seed', name), 'utf8');
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

/** A fresh temporary directory owned by one test file. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `tiergraph-${prefix}-`));
}

export function readSeed(name: string): string {
  return fs.readFileSync(path.join(ROOT, 'seed', name), 'utf8');
}

import fs from 'node:fs';
import path from 'node:path';

/**
 * The project directory `name` (one that holds `marker`), found upwards from
 * this module, so the same code finds `cypher/` and `schema/` from `src/` under
 * the test runner and from `dist/src/` when built.
 */
export function projectDir(name: string, marker: string): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(path.join(candidate, marker))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error(`${name}/ directory not found above ${__dirname}`);
}

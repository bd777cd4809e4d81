import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './paths';

/** Builds the web app and the explorer into dist/web, as `npm run build` does; throws with esbuild's output on failure. */
export function buildWebApp(): void {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'web/build.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`web app build failed: ${built.stderr}`);
}

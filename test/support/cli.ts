import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './paths';

/** What a `tiergraph` command printed, and how it ended. */
export interface CliResult {
  status: number | null;
  out: string;
  err: string;
}

/** Runs the `tiergraph` command from the sources, in the repository, with `env` added to this process's environment. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): CliResult {
  const r = spawnSync(
    process.execPath,
    ['-r', path.join(ROOT, 'test/support/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), ...args],
    { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, ...env } },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

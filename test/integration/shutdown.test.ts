import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../support/paths';

/**
 * `tiergraph serve` as deployed (NODE_ENV=production, where Apollo Server would otherwise install
 * signal handlers of its own): SIGTERM closes the server in order and the process exits with 0,
 * rather than being killed by a signal sent again half-way through its close.
 */
describe('tiergraph serve on SIGTERM', () => {
  const dataDir = tempDir('shutdown');
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('closes and exits with 0', async () => {
    const child = spawn(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), 'serve'],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          NODE_ENV: 'production',
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          API_KEYS: 'test-key-0123456789abcdef',
          SEED_DEMO: 'false',
          LOG_LEVEL: 'info',
          JOBS_POLL_MS: '100',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const deadline = Date.now() + 50_000;
    while (!out.includes('tiergraph listening') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('tiergraph listening');
    child.kill('SIGTERM');
    expect(await ended).toEqual({ code: 0, signal: null });
    expect(out).toContain('shutting down');
  }, 60_000);
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

/** One run of the web build; resolves with its exit status and what it printed to stderr. */
const build = () =>
  new Promise<{ status: number | null; err: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'web/build.mjs')], { cwd: ROOT });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (status) => resolve({ status, err }));
  });

describe('the web build', () => {
  jest.setTimeout(120_000);

  // The browser suites build the app at once, beside each other. Before dist/web was swapped in by
  // renames, two builds ending together failed with ENOTEMPTY (in every one of four tries of four at once).
  it('succeeds when several builds run at once, and leaves one complete dist/web', async () => {
    const runs = await Promise.all([build(), build(), build(), build()]);
    expect(runs.map((r) => (r.status === 0 ? 'ok' : r.err))).toEqual(['ok', 'ok', 'ok', 'ok']);
    const web = path.join(ROOT, 'dist', 'web');
    const html = fs.readFileSync(path.join(web, 'index.html'), 'utf8');
    const script = /src="\/assets\/([^"]+)"/.exec(html)?.[1];
    expect(script && fs.existsSync(path.join(web, 'assets', script))).toBe(true);
    // Nothing left beside it.
    expect(fs.readdirSync(path.join(ROOT, 'dist')).filter((n) => n.startsWith('web.'))).toEqual([]);
  });
});

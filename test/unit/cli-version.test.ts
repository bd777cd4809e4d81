import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

describe('tiergraph --version', () => {
  it("prints the package's version and exits 0", () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = spawnSync(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), '--version'],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
    );
    expect([r.status, r.stdout.trim()]).toEqual([0, version]);
  });
});

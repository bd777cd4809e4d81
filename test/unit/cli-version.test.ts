import { runCli } from '../support/cli';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

describe('tiergraph --version', () => {
  it("prints the package's version and exits 0", () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = runCli(['--version'], {}, 30_000);
    expect([r.status, r.out.trim()]).toEqual([0, version]);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { ROOT } from '../support/paths';

describe("bench/run.mjs's targets", () => {
  it('judge serving RSS against the 3 GB of the issues, in bytes, not 3 GiB', () => {
    const text = fs.readFileSync(path.join(ROOT, 'bench', 'run.mjs'), 'utf8');
    const expression = /^\s*rssBytes:\s*([^,\n]+),/m.exec(text)?.[1];
    expect(expression).toBeDefined();
    // The expression is a literal of the script; evaluated alone, it is the number the bench compares.
    const bytes = Number(vm.runInNewContext(expression!));
    expect(bytes).toBe(3_000_000_000);
  });
});

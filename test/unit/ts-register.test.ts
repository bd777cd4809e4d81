import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../support/paths';

// The loader child processes of the tests use (test/support/ts-register.js) keeps what it transpiles;
// what it keeps must never stand in for a source that has changed since.
describe("the tests' TypeScript loader for child processes", () => {
  const run = (file: string) =>
    spawnSync(process.execPath, ['-r', path.join(ROOT, 'test/support/ts-register.js'), file], {
      encoding: 'utf8',
    });

  it('runs a changed source as it now reads, not as it was first transpiled', () => {
    const dir = tempDir('ts-register');
    const file = path.join(dir, 'answer.ts');
    const write = (n: number) =>
      fs.writeFileSync(file, `const answer: number = ${n};\nconsole.log(\`answer \${answer}\`);\n`);
    write(1);
    expect(run(file).stdout).toBe('answer 1\n');
    expect(run(file).stdout).toBe('answer 1\n');
    write(2);
    expect(run(file).stdout).toBe('answer 2\n');
    write(1);
    expect(run(file).stdout).toBe('answer 1\n');
  });

  it('keeps what it transpiled in node_modules/.cache for the next child', () => {
    const dir = tempDir('ts-register');
    const file = path.join(dir, 'kept.ts');
    const stamp = `${process.pid}-${Date.now()}`;
    fs.writeFileSync(file, `export const stamp: string = '${stamp}';\nconsole.log(stamp);\n`);
    expect(run(file).stdout).toBe(`${stamp}\n`);
    const cache = path.join(ROOT, 'node_modules', '.cache', 'tiergraph-test-ts');
    const kept = fs
      .readdirSync(cache)
      .filter((f) => f.endsWith('.js') && fs.readFileSync(path.join(cache, f), 'utf8').includes(stamp));
    expect(kept).toHaveLength(1);
  });
});

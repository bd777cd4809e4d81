import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SERVE_ENV, SERVE_NODE_FLAGS, missingServeEnv, missingServeFlags } from '../../src/heap-settings';
import { ROOT } from '../support/paths';

/** The words of a package.json script up to the CLI's path: what node is started with. */
function nodeWordsOf(script: string): string[] {
  const words = script.split(/\s+/);
  const node = words.lastIndexOf('node');
  const cli = words.indexOf('dist/src/cli/main.js');
  expect(node).toBeGreaterThanOrEqual(0);
  expect(cli).toBeGreaterThan(node);
  return words.slice(node + 1, cli);
}

describe("the server's node flags (SERVE_NODE_FLAGS)", () => {
  it('are given by npm start and npm run dev, before the CLI', () => {
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const name of ['start', 'dev']) {
      expect(scripts[name]).toMatch(/dist\/src\/cli\/main\.js serve$/);
      expect(nodeWordsOf(scripts[name]!)).toEqual(expect.arrayContaining([...SERVE_NODE_FLAGS]));
    }
  });

  it("are given by the image's entry point, which runs the CLI", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const line = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
    expect(line).toBeDefined();
    const entry = JSON.parse(line!) as string[];
    expect(entry[0]).toBe('node');
    expect(entry.at(-1)).toBe('/app/dist/src/cli/main.js');
    expect(entry.slice(1, -1)).toEqual(expect.arrayContaining([...SERVE_NODE_FLAGS]));
  });

  it('are flags this node accepts', () => {
    // A flag node does not know stops it before the server starts: npm start would fail at once.
    expect(SERVE_NODE_FLAGS.length).toBeGreaterThan(0);
    const r = spawnSync(process.execPath, [...SERVE_NODE_FLAGS, '-e', 'process.exit(0)'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('missingServeFlags', () => {
  const flag = SERVE_NODE_FLAGS[0]!;
  const name = flag.split('=')[0]!;

  it('names the flags given neither on the command line nor in NODE_OPTIONS', () => {
    expect(missingServeFlags([], '')).toEqual([...SERVE_NODE_FLAGS]);
    expect(missingServeFlags(['--inspect'], '--max-old-space-size=4096')).toEqual([...SERVE_NODE_FLAGS]);
  });

  it('takes a flag from either place, with any value, and with underscores for dashes', () => {
    expect(missingServeFlags([...SERVE_NODE_FLAGS], '')).toEqual([]);
    expect(missingServeFlags([], `--max-old-space-size=4096 ${name}=64`)).toEqual([]);
    expect(missingServeFlags([`${name.replace(/-/g, '_').replace(/^__/, '--')}=16`], '')).toEqual([]);
  });
});

describe("the server's environment (SERVE_ENV)", () => {
  it("is set by the image's runtime stage, value for value", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(Object.keys(SERVE_ENV).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(SERVE_ENV))
      expect(runtime).toMatch(new RegExp(`^(ENV\\s+|\\s+)${name}=${value}\\b`, 'm'));
  });

  it('is named when missing on Linux, where the C library reads it, and not elsewhere', () => {
    const names = Object.keys(SERVE_ENV);
    expect(missingServeEnv({}, 'linux')).toEqual(names);
    expect(missingServeEnv(Object.fromEntries(names.map((n) => [n, ''])), 'linux')).toEqual(names);
    expect(missingServeEnv({ ...SERVE_ENV }, 'linux')).toEqual([]);
    // Another value is the operator's choice.
    expect(missingServeEnv(Object.fromEntries(names.map((n) => [n, '4'])), 'linux')).toEqual([]);
    expect(missingServeEnv({}, 'darwin')).toEqual([]);
  });
});

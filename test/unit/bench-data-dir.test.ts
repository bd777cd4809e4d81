import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';

/** `bench/run.mjs` with these arguments; it must stop before it builds or starts anything. */
function bench(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'run.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, BENCH_COMPANIES: '', BENCH_SEED: '', BENCH_DATA_DIR: '' },
  });
  return { status: r.status, stderr: r.stderr };
}

// Each case starts a node process; a slow machine needs more than jest's default 5 s.
jest.setTimeout(60_000);

describe('bench/run.mjs and a data directory that holds another dataset', () => {
  let dir: string;
  let dataset: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-bench-dir-'));
    dataset = path.join(dir, 'dataset');
    fs.mkdirSync(dataset);
    fs.writeFileSync(path.join(dataset, '_GENERATED_20000_1'), '{}');
    fs.writeFileSync(path.join(dataset, 'companies.csv'), 'kept\n');
    fs.mkdirSync(path.join(dir, 'store', 'graph'), { recursive: true });
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is refused, keeping the dataset and its store, when the size differs', () => {
    const r = bench(['--data-dir', dir, '--companies', '1000', '--skip-pg', '--cases', 'healthz']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('holds the dataset of 20000 companies, seed 1, not 1000, seed 1');
    expect(r.stderr).toContain('give another --data-dir');
    expect(fs.readFileSync(path.join(dataset, 'companies.csv'), 'utf8')).toBe('kept\n');
    expect(fs.existsSync(path.join(dir, 'store', 'graph'))).toBe(true);
  });

  it('is refused when the seed differs, for the Neo4j store too', () => {
    const r = bench([
      '--data-dir',
      dir,
      '--companies',
      '20000',
      '--seed',
      '2',
      '--store',
      'neo4j',
      '--neo4j-uri',
      'bolt://127.0.0.1:1',
      '--skip-pg',
      '--cases',
      'healthz',
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('not 20000, seed 2');
    expect(fs.existsSync(path.join(dataset, '_GENERATED_20000_1'))).toBe(true);
  });

  it('is refused when it holds files without a marker: a dataset the bench did not generate', () => {
    fs.rmSync(path.join(dataset, '_GENERATED_20000_1'));
    for (const store of [[], ['--store', 'neo4j', '--neo4j-uri', 'bolt://127.0.0.1:1']]) {
      const r = bench([
        '--data-dir',
        dir,
        '--companies',
        '20000',
        ...store,
        '--skip-pg',
        '--cases',
        'healthz',
      ]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('holds files (companies.csv) that this bench did not generate');
      expect(fs.readFileSync(path.join(dataset, 'companies.csv'), 'utf8')).toBe('kept\n');
      expect(fs.existsSync(path.join(dir, 'store', 'graph'))).toBe(true);
    }
  });

  it('says that --neo4j-loaded belongs to the Neo4j store', () => {
    const r = bench(['--data-dir', dir, '--companies', '20000', '--neo4j-loaded']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--neo4j-loaded goes with --store neo4j');
  });
});

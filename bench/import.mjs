// Import benchmark: runs the built CLI's `tiergraph import` (dist/, so `npm run build`
// first) on the generated dataset, each run into a fresh DATA_DIR, and reports the
// wall time, the rows the CLI counted and its two phases. Prints a table with the
// median of the runs and writes every run to bench/results/import-<timestamp>.json.
//   node bench/import.mjs [--data-dir bench/data] [--runs 3] [--store embedded|neo4j]
// The dataset comes from bench/run.mjs (or `tiergraph generate --out <data-dir>/dataset`).
// With --store neo4j the NEO4J_* variables of the environment are used, and every
// run imports into the same database (a re-import is an upsert).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, ROOT, median, parseArgs } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 3);
const store = args.store ?? 'embedded';
const dataset = path.join(dataDir, 'dataset');

const log = (s) => process.stderr.write(`[import-bench] ${s}\n`);

if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
if (!fs.existsSync(path.join(dataset, 'companies.csv')))
  throw new Error(`no dataset in ${dataset}: run bench/run.mjs or tiergraph generate first`);

function importOnce(workDir) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [CLI, 'import', dataset], {
      env: { ...process.env, DATA_DIR: workDir, STORE: store, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) return reject(new Error(`import exited ${code}: ${err.slice(-2000)}`));
      const m =
        /Imported ([\d,]+) rows in [\d.]+ s \(([\d,]+) rows\/s; validate\+derive ([\d.]+) s, load ([\d.]+) s\)/.exec(
          out,
        );
      if (!m) return reject(new Error(`unexpected import output: ${out}`));
      const num = (s) => Number(s.replace(/,/g, ''));
      resolve({
        seconds,
        rows: num(m[1]),
        stageSeconds: Number(m[3]),
        loadSeconds: Number(m[4]),
        output: out,
      });
    });
  });
}

const results = [];
for (let i = 0; i < runs; i++) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-import-bench-'));
  try {
    log(`run ${i + 1}/${runs} into ${workDir}`);
    const r = await importOnce(workDir);
    log(`  ${r.seconds.toFixed(1)} s, ${r.rows.toLocaleString('en-US')} rows`);
    results.push(r);
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

const rows = results[0].rows;
const total = median(results.map((r) => r.seconds));
const summary = {
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
  store,
  runs,
  rows,
  median_seconds: total,
  median_rows_per_s: Math.round(rows / total),
  median_stage_seconds: median(results.map((r) => r.stageSeconds)),
  median_load_seconds: median(results.map((r) => r.loadSeconds)),
  runs_seconds: results.map((r) => Number(r.seconds.toFixed(1))),
};
process.stdout.write(
  [
    `machine: ${summary.machine}`,
    `store: ${store}, dataset: ${dataset}`,
    `| what | median of ${runs} |`,
    '|---|---:|',
    `| rows (companies, edges, relationships, cluster edges, evidence, identifiers, addresses) | ${rows.toLocaleString('en-US')} |`,
    `| validate, derive, stage | ${summary.median_stage_seconds.toFixed(1)} s |`,
    `| bulk load | ${summary.median_load_seconds.toFixed(1)} s |`,
    `| whole import (wall, process start to exit) | ${total.toFixed(1)} s |`,
    `| rows/s | ${summary.median_rows_per_s.toLocaleString('en-US')} |`,
    `runs: ${summary.runs_seconds.join(' s, ')} s`,
    '',
  ].join('\n'),
);
const resultsDir = path.join(ROOT, 'bench', 'results');
fs.mkdirSync(resultsDir, { recursive: true });
fs.writeFileSync(
  path.join(resultsDir, `import-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify({ ...summary, results: results.map(({ output: _o, ...r }) => r) }, null, 2),
);

// Search rows benchmark: times the mapping of staged Company lines to search rows
// (decodeStagedCompanyLines, src/store/staged-search-rows.ts), which an import's search index build
// does for every company while the import stages its files, in this process, over several runs.
// Usage (after `npm run build`):
//   node bench/search-rows.mjs [--data-dir bench/data] [--runs 5] [--root <a built checkout>]
// The first run on a data directory stages its dataset (as `tiergraph import` does, without loading
// it) and keeps the staged Company file in <data-dir>/staged-company.tsv; delete it to stage again.
// `--root` times another build (its dist/) on the same lines, for before-and-after comparisons in
// turns. The lines are handed over in pieces of 4 MiB, as the import's feed hands them. Each run
// gives its wall and CPU time; results go to bench/results/search-rows-<timestamp>.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, median, parseArgs, writeResults } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 5);
const root = path.resolve(args.root ?? ROOT);
const require = createRequire(import.meta.url);
const built = (base, rel) => {
  const file = path.join(base, 'dist', 'src', rel);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run npm run build in ${base} first`);
  return require(file);
};

const staged = path.join(dataDir, 'staged-company.tsv');
if (!fs.existsSync(staged)) {
  const dataset = path.join(dataDir, 'dataset');
  if (!fs.existsSync(path.join(dataset, 'companies.csv')))
    throw new Error(`${dataset} has no dataset: run bench/run.mjs on ${dataDir} first`);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'search-rows-'));
  try {
    process.stderr.write(`[search-rows] staging ${dataset} once (kept as ${staged})\n`);
    const { stageOnThread } = built(ROOT, 'import/stage-thread.js');
    await stageOnThread(dataset, out, {});
    fs.copyFileSync(path.join(out, 'Company.tsv'), staged);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

const { decodeStagedCompanyLines, stagedSearchRowDecoder } = built(root, 'store/staged-search-rows.js');
// Pieces of whole lines, as the import's feed hands them to the build (its FEED_BYTES), header left out.
const bytes = fs.readFileSync(staged);
const PIECE = 4 << 20;
const pieces = [];
for (let p = bytes.indexOf(10) + 1; p < bytes.length;) {
  const end = bytes.lastIndexOf(10, Math.min(bytes.length - 1, p + PIECE));
  if (end < p) throw new Error('a staged Company line longer than a piece');
  pieces.push(bytes.toString('utf8', p, end + 1));
  p = end + 1;
}

const results = [];
let rows = 0;
for (let r = 0; r < runs; r++) {
  const decode = stagedSearchRowDecoder();
  const t = performance.now();
  const c = process.cpuUsage();
  rows = 0;
  for (const piece of pieces) rows += decodeStagedCompanyLines(piece, decode).length;
  const u = process.cpuUsage(c);
  const run = { wallMs: performance.now() - t, cpuMs: (u.user + u.system) / 1000 };
  results.push(run);
  process.stderr.write(
    `[search-rows] run ${r + 1}: ${run.wallMs.toFixed(0)} ms (CPU ${run.cpuMs.toFixed(0)} ms)\n`,
  );
}
const summary = {
  companies: rows,
  root,
  runs,
  wallMs: median(results.map((x) => x.wallMs)),
  cpuMs: median(results.map((x) => x.cpuMs)),
  usPerRow: (median(results.map((x) => x.wallMs)) * 1000) / rows,
};
console.log(JSON.stringify(summary));
writeResults('search-rows', { summary, results });

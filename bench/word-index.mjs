// Word index build benchmark: times the search index's word index (src/search/word-index.ts) built
// from the names and aliases of a dataset's companies.csv, as an import's build thread and a
// server's cold start build it, in this process, over several runs. Usage (after `npm run build`):
//   node bench/word-index.mjs [--data-dir bench/data] [--runs 3] [--root <a built checkout>]
// `--root` times another build (its dist/) on the same names, for before-and-after comparisons in
// turns. Each run times `start` (words read, vocabulary sorted, typo words begun on their thread)
// and `finish` (postings, lead lists; waits for the typo words): wall time, and the CPU time of the
// whole process, which includes the typo thread's. Ranks are a fixed permutation of the companies,
// so every run and every build orders the same postings. Results go to
// bench/results/word-index-<timestamp>.json.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, eachCsvRow, median, parseArgs, writeResults } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 3);
const root = path.resolve(args.root ?? ROOT);
const require = createRequire(import.meta.url);
const built = (rel) => {
  const file = path.join(root, 'dist', 'src', rel);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run npm run build in ${root} first`);
  return require(file);
};
const { WordIndex } = built('search/word-index.js');

const file = path.join(dataDir, 'dataset', 'companies.csv');
if (!fs.existsSync(file)) throw new Error(`${file} is missing: run bench/run.mjs on ${dataDir} first`);
const names = [];
await eachCsvRow(file, [['name'], ['aliases']], ([name, aliases]) => {
  names.push([
    name,
    ...aliases
      .split('|')
      .map((a) => a.trim())
      .filter(Boolean),
  ]);
});
// A permutation of the companies (the step is prime to any count it is used with here).
const step = 7919;
if (names.length % step === 0) throw new Error(`${names.length} companies: pick another step`);
const rank = Uint32Array.from({ length: names.length }, (_, i) => (i * step) % names.length);

const cpuMs = (since) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
const results = [];
for (let r = 0; r < runs; r++) {
  let t = performance.now();
  let c = process.cpuUsage();
  const started = await WordIndex.start(names, Infinity);
  const start = { wallMs: performance.now() - t, cpuMs: cpuMs(c) };
  t = performance.now();
  c = process.cpuUsage();
  await started.finish(rank);
  const finish = { wallMs: performance.now() - t, cpuMs: cpuMs(c) };
  results.push({ start, finish });
  process.stderr.write(
    `[word-index] run ${r + 1}: start ${start.wallMs.toFixed(0)} ms (CPU ${start.cpuMs.toFixed(0)} ms), finish ${finish.wallMs.toFixed(0)} ms (CPU ${finish.cpuMs.toFixed(0)} ms)\n`,
  );
}
const summary = {
  companies: names.length,
  root,
  runs,
  startWallMs: median(results.map((x) => x.start.wallMs)),
  startCpuMs: median(results.map((x) => x.start.cpuMs)),
  finishWallMs: median(results.map((x) => x.finish.wallMs)),
  finishCpuMs: median(results.map((x) => x.finish.cpuMs)),
};
console.log(JSON.stringify(summary));
writeResults('word-index', { summary, results });
// The typo threads of the runs are done; nothing else keeps the process.
process.exit(0);

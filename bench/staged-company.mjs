// Staged Company lines benchmark: times the two steps an import runs over every staged Company
// line besides the engine's load, in this process, over several runs:
//   rows      the search rows (decodeStagedCompanyLines, src/store/staged-search-rows.ts), which the
//             search index's build maps while the import stages its files; the lines are handed over
//             in pieces of 4 MiB, as the import's feed hands them;
//   profiles  the point-read file's profiles (StagedProfileWriter, src/store/staged-point-file.ts),
//             written from the staged lines while the engine loads them;
//   build     the whole search index build an import feeds (SearchIndexBuilder, then
//             CompanySearchIndex.finish): the names ahead of their rows, in pieces of 1 MiB of
//             names lines as the import reads them from companies.csv, then the rows and their keys,
//             then the counts (read from the same lines) and the index made from them, with the typo
//             thread it starts. Its CPU is the process's, every thread's; not part of `both`.
// Usage (after `npm run build`):
//   node bench/staged-company.mjs [--data-dir bench/data] [--runs 5] [--step rows|profiles|both|build]
//                                 [--root <a built checkout>]
// The first run on a data directory stages its dataset (as `tiergraph import` does, without loading
// it) and keeps the staged Company file in <data-dir>/staged-company.tsv; delete it to stage again.
// `--root` times another build (its dist/) on the same lines, for before-and-after comparisons in
// turns. Each run gives its wall and CPU time; results go to bench/results/staged-company-<timestamp>.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, median, parseArgs, writeResults } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 5);
const root = path.resolve(args.root ?? ROOT);
const step = args.step ?? 'both';
if (!['rows', 'profiles', 'both', 'build'].includes(step))
  throw new Error(`--step ${step}: rows, profiles, both or build`);
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
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'staged-company-'));
  try {
    process.stderr.write(`[staged-company] staging ${dataset} once (kept as ${staged})\n`);
    const { stageOnThread } = built(ROOT, 'import/stage-thread.js');
    await stageOnThread(dataset, out, {});
    fs.copyFileSync(path.join(out, 'Company.tsv'), staged);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

const { decodeStagedCompanyLines, decodeStagedNames, stagedNamesLine, stagedSearchRowDecoder } = built(
  root,
  'store/staged-search-rows.js',
);
const { StagedProfileWriter } = built(root, 'store/staged-point-file.js');
const { stagedColumns } = built(root, 'store/staging-file.js');
const bytes = fs.readFileSync(staged);
const first = bytes.indexOf(10) + 1;

/** The lines as text, in pieces of whole lines as the import's feed hands them (its FEED_BYTES). */
function piecesOfLines() {
  const PIECE = 4 << 20;
  const pieces = [];
  for (let p = first; p < bytes.length;) {
    const end = bytes.lastIndexOf(10, Math.min(bytes.length - 1, p + PIECE));
    if (end < p) throw new Error('a staged Company line longer than a piece');
    pieces.push(bytes.toString('utf8', p, end + 1));
    p = end + 1;
  }
  return pieces;
}

/** Every line to its search row. */
function prepareRows() {
  const pieces = piecesOfLines();
  return () => {
    const decode = stagedSearchRowDecoder();
    let n = 0;
    for (const piece of pieces) n += decodeStagedCompanyLines(piece, decode).length;
    return n;
  };
}

/** Every line to its profile's JSON, as the point-read file's writer gets them. */
function prepareProfiles() {
  const columns = stagedColumns('Company');
  return () => {
    const writer = new StagedProfileWriter(columns);
    let n = 0;
    for (let p = first; p < bytes.length;) {
      const nl = bytes.indexOf(10, p);
      if (writer.write(bytes, p, nl)) n++;
      p = nl + 1;
    }
    return n;
  };
}

/** The search index's build as an import feeds it: rows without their counts, then the counts. */
function prepareBuild() {
  const { SearchIndexBuilder, CompanySearchIndex } = built(root, 'search/company-search.js');
  const pieces = piecesOfLines();
  const columns = stagedColumns('Company');
  const at = (name) => columns.indexOf(name);
  const counted = [
    'count_suppliers',
    'count_customers',
    'count_supplier_evidence',
    'count_customer_evidence',
  ].map(at);
  const counts = counted.map(() => []);
  // The names lines, as the import's staging of companies.csv hands them over (its NAMES_BYTES): the
  // names the build holds are cut from these pieces, as in an import, not from the whole lines.
  const NAMES_PIECE = 1 << 20;
  const nameAt = at('name');
  const aliasesAt = at('aliases');
  const namePieces = [];
  let names = '';
  for (let p = first; p < bytes.length;) {
    const nl = bytes.indexOf(10, p);
    const fields = bytes.toString('utf8', p, nl).split('\t');
    counted.forEach((c, k) => counts[k].push(Number(fields[c])));
    names += stagedNamesLine(fields[nameAt], fields[aliasesAt]);
    if (names.length >= NAMES_PIECE) {
      namePieces.push(Buffer.from(names));
      names = '';
    }
    p = nl + 1;
  }
  if (names.length > 0) namePieces.push(Buffer.from(names));
  const [suppliers, customers, supplierEvidence, customerEvidence] = counts.map((c) => Int32Array.from(c));
  return async () => {
    const builder = new SearchIndexBuilder();
    for (const piece of namePieces) builder.addNames(decodeStagedNames(piece.toString('utf8')));
    const decode = stagedSearchRowDecoder();
    for (const piece of pieces) builder.addUncounted(decodeStagedCompanyLines(piece, decode));
    builder.setCounts({ suppliers, customers, supplierEvidence, customerEvidence });
    const index = await CompanySearchIndex.finish(builder);
    return index.size;
  };
}

const steps = { rows: prepareRows, profiles: prepareProfiles, build: prepareBuild };
const summary = { root, runs };
const all = {};
for (const name of step === 'both' ? ['rows', 'profiles'] : [step]) {
  const run = steps[name]();
  const results = [];
  let count = 0;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    count = await run();
    const u = process.cpuUsage(c);
    const one = { wallMs: performance.now() - t, cpuMs: (u.user + u.system) / 1000 };
    results.push(one);
    process.stderr.write(
      `[staged-company] ${name} run ${r + 1}: ${one.wallMs.toFixed(0)} ms (CPU ${one.cpuMs.toFixed(0)} ms)\n`,
    );
  }
  const wallMs = median(results.map((x) => x.wallMs));
  summary[name] = {
    companies: count,
    wallMs,
    cpuMs: median(results.map((x) => x.cpuMs)),
    usPerCompany: (wallMs * 1000) / count,
  };
  all[name] = results;
}
console.log(JSON.stringify(summary));
writeResults('staged-company', { summary, results: all });

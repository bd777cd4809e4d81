// How close relevance search comes to its own formula where many companies match: for the search terms
// bench/run.mjs draws, the first page of a search (candidates drawn within budgets) against the page
// that scoring every company gives (CompanySearchIndex.searchExhaustive), on the search index saved
// beside the embedded store of bench/run.mjs. Usage (after `npm run build` and a `bench/run.mjs` run):
//   node bench/search-exactness.mjs [--data-dir bench/data] [--seed 1] [--queries 300] [--from 0] [--limit 10]
// --from skips that many terms first: terms that no setting was tuned on.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, loadSavedSearchIndex, median, parseArgs, writeResults } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const seed = Number(args.seed ?? 1);
const queries = Number(args.queries ?? 300);
const from = Number(args.from ?? 0);
const limit = Number(args.limit ?? 10);
const log = (msg) => console.log(`[exactness ${new Date().toISOString().slice(11, 19)}] ${msg}`);

const inputs = path.join(dataDir, 'dataset', `_bench_inputs_v1_${seed}.json`);
if (!fs.existsSync(inputs)) throw new Error(`no ${inputs}: run bench/run.mjs on this data dir first`);
const terms = JSON.parse(fs.readFileSync(inputs, 'utf8')).search_terms.slice(from, from + queries);

const loadStarted = performance.now();
const { file, index } = loadSavedSearchIndex(dataDir);
log(
  `loaded ${index.size} companies from ${file} in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`,
);

const criteria = (name) => ({ name, minSimilarity: 0.3, includeSubsidiaries: false, limit, offset: 0 });
for (const t of terms.slice(0, 50)) index.search(criteria(t)); // warm-up
const rows = [];
const started = performance.now();
for (const [i, term] of terms.entries()) {
  const t0 = performance.now();
  const drawn = index.search(criteria(term)).hits.map((h) => h.vid);
  const ms = performance.now() - t0;
  const t1 = performance.now();
  const every = index.searchExhaustive(criteria(term)).hits.map((h) => h.vid);
  const exhaustiveMs = performance.now() - t1;
  const wanted = new Set(every);
  const found = drawn.filter((v) => wanted.has(v)).length;
  rows.push({
    term,
    ms,
    exhaustiveMs,
    sameFirst: every.length === 0 ? drawn.length === 0 : drawn[0] === every[0],
    recall: every.length === 0 ? 1 : found / every.length,
    samePage: drawn.length === every.length && found === every.length,
    sameOrder: JSON.stringify(drawn) === JSON.stringify(every),
  });
  if ((i + 1) % 50 === 0)
    log(`${i + 1}/${terms.length} terms, ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

const share = (f) => (100 * rows.filter(f).length) / rows.length;
const summary = {
  from,
  terms: rows.length,
  limit,
  same_first_pct: share((r) => r.sameFirst),
  recall_pct: (100 * rows.reduce((s, r) => s + r.recall, 0)) / rows.length,
  same_page_pct: share((r) => r.samePage),
  same_order_pct: share((r) => r.sameOrder),
  search_ms_median: median(rows.map((r) => r.ms)),
  search_ms_mean: rows.reduce((s, r) => s + r.ms, 0) / rows.length,
  exhaustive_ms_median: median(rows.map((r) => r.exhaustiveMs)),
};
console.log(`
| terms | first result the formula's best | recall of the page | whole page | same order | search ms (median / mean) | exhaustive ms (median) |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ${summary.terms} | ${summary.same_first_pct.toFixed(1)}% | ${summary.recall_pct.toFixed(1)}% | ${summary.same_page_pct.toFixed(1)}% | ${summary.same_order_pct.toFixed(1)}% | ${summary.search_ms_median.toFixed(2)} / ${summary.search_ms_mean.toFixed(2)} | ${summary.exhaustive_ms_median.toFixed(0)} |
`);
const out = writeResults('search-exactness', { file, summary, rows });
log(`wrote ${out}`);

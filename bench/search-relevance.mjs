// Timing script for relevance search and suggestions over an imported-format companies file (timed
// assertions are not allowed in tests). Builds the in-process index from companies.csv (and, when
// present, relationships counted from relationships.csv for importance), then times suggestions and
// relevance searches for queries made from the names themselves: first words, prefixes, acronyms, typos.
// The labelled query set of the relevance test is added to the dataset and its top-1 accuracy reported.
// Usage: node --max-old-space-size=8192 bench/search-relevance.mjs <dataset dir> [queries=2000]
// Loads the TypeScript sources through the project's compiler, so it needs no build step.
import { createRequire } from 'node:module';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const ts = require('typescript');
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
    fileName: filename,
  });
  module._compile(outputText, filename);
};
const root = fileURLToPath(new URL('..', import.meta.url));
const { CompanySearchIndex } = require(`${root}src/search/company-search.ts`);
const { parse } = require('csv-parse');

const dir = process.argv[2];
const queryCount = Number(process.argv[3] ?? 2000);
if (!dir) throw new Error('usage: bench/search-relevance.mjs <dataset dir> [queries]');

async function* records(file, columns) {
  const parser = createReadStream(join(dir, file)).pipe(parse({ columns: true, relax_quotes: true }));
  for await (const r of parser) yield columns.map((c) => r[c]);
}

const degree = new Map();
if (existsSync(join(dir, 'relationships.csv'))) {
  for await (const [s, c] of records('relationships.csv', ['supplier_id', 'customer_id'])) {
    degree.set(s, (degree.get(s) ?? 0) + 1);
    degree.set(c, (degree.get(c) ?? 0) + 1);
  }
}
const rows = [];
for await (const [vid, name, country] of records('companies.csv', ['vid', 'name', 'domiciled_country'])) {
  rows.push({
    core: { vid, name },
    vid,
    name,
    searchedByDefault: true,
    isClusterParent: false,
    aliases: [],
    industry: null,
    degree: degree.get(vid) ?? 0,
    country: country || null,
    hosts: [],
    cities: [],
    identifierValues: [],
  });
}
// The labelled query set's hand-made companies, added to the dataset's so that its traps compete with
// every name of a large index: the top-1 accuracy of the labelled queries is reported at that scale.
const fixtures = join(root, 'test', 'fixtures');
const labelled = JSON.parse(readFileSync(join(fixtures, 'search-relevance.json'), 'utf8'));
const fixtureRows = async (file, columns) => {
  const out = [];
  const parser = createReadStream(join(fixtures, labelled.dataset, file)).pipe(parse({ columns: true }));
  for await (const r of parser) out.push(columns.map((c) => r[c]));
  return out;
};
const labelledDegree = new Map();
for (const [s, c] of await fixtureRows('relationships.csv', ['supplier_id', 'customer_id'])) {
  for (const v of [s, c]) labelledDegree.set(v, (labelledDegree.get(v) ?? 0) + 1);
}
const clusterRows = await fixtureRows('clusters.csv', ['cid_id', 'vid', 'is_parent']);
const clusterSize = new Map();
for (const [cid] of clusterRows) clusterSize.set(cid, (clusterSize.get(cid) ?? 0) + 1);
const membership = new Map(
  clusterRows.map(([cid, vid, parent]) => [vid, { cid, parent: parent === 'true' }]),
);
for (const [vid, name, country] of await fixtureRows('companies.csv', ['vid', 'name', 'domiciled_country'])) {
  const m = membership.get(vid);
  rows.push({
    core: { vid, name },
    vid,
    name,
    searchedByDefault: m === undefined || m.parent,
    isClusterParent: m !== undefined && m.parent && clusterSize.get(m.cid) > 1,
    aliases: [],
    industry: null,
    degree: labelledDegree.get(vid) ?? 0,
    country: country || null,
    hosts: [],
    cities: [],
    identifierValues: [],
  });
}

let started = performance.now();
const index = await CompanySearchIndex.build({ scanSearchRows: async (cb) => cb(rows) });
console.log(
  `index of ${rows.length} companies built in ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`,
);

const misses = labelled.queries.filter(
  (q) =>
    index.search({
      name: q.query,
      minSimilarity: 0.3,
      includeSubsidiaries: q.include_subsidiaries ?? false,
      country: q.country,
      limit: 1,
      offset: 0,
      sort: 'relevance',
    }).hits[0]?.vid !== q.vid,
);
console.log(
  `labelled queries among ${rows.length} companies: top-1 accuracy ${(100 * (1 - misses.length / labelled.queries.length)).toFixed(1)}% ` +
    `(${labelled.queries.length} queries; misses: ${JSON.stringify(misses.map((q) => q.query))})`,
);

let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};
const words = (n) =>
  n
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
const queries = [];
for (let k = 0; k < queryCount; k++) {
  const w = words(rows[Math.floor(rand() * rows.length)].name);
  const kind = k % 4;
  if (kind === 0) queries.push(w[0]);
  else if (kind === 1) queries.push(w.length > 1 ? `${w[0]} ${w[1].slice(0, 2)}` : w[0].slice(0, 3));
  else if (kind === 2) queries.push(w.map((x) => x[0]).join(''));
  else queries.push(w[0].length > 5 ? w[0].slice(0, 2) + w[0][3] + w[0][2] + w[0].slice(4) : w.join(' '));
}

function time(label, fn) {
  for (const q of queries.slice(0, 100)) fn(q);
  const ms = [];
  for (const q of queries) {
    started = performance.now();
    fn(q);
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const at = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(2);
  console.log(`${label}: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms over ${ms.length} queries`);
}
time('suggest', (q) => index.suggest(q, 5, false));
time('search (relevance, limit 10)', (q) =>
  index.search({
    name: q,
    minSimilarity: 0.3,
    includeSubsidiaries: false,
    limit: 10,
    offset: 0,
    sort: 'relevance',
  }),
);
time('search (similarity, limit 10)', (q) =>
  index.search({
    name: q,
    minSimilarity: 0.3,
    includeSubsidiaries: false,
    limit: 10,
    offset: 0,
    sort: 'similarity',
  }),
);
// SLOWEST=1 lists the slowest relevance searches.
if (process.env.SLOWEST) {
  const slow = queries.map((q) => {
    const t0 = performance.now();
    index.search({
      name: q,
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
      sort: 'relevance',
    });
    return [performance.now() - t0, q];
  });
  console.log(slow.sort((a, b) => b[0] - a[0]).slice(0, 15));
}

// Relevance search of two builds compared in process: the same saved search index, the search terms
// bench/run.mjs draws, no HTTP. Both builds are loaded into one process and search term by term in
// turns; a process favours the index it loads second by a few per cent, so the comparison runs twice,
// once in each loading order, and the geometric mean of the two ratios is the figure to quote. It also
// counts the terms whose first page differs between the builds. With --suggest it does the same for
// suggestions, over the typed beginnings bench/run.mjs's suggest case sends (the default limit, 5).
// Usage (both checkouts built with `npm run build`, and a bench/run.mjs run on the data dir):
//   node bench/search-ab.mjs --old <checkout> [--new <checkout, default this one>] [--data-dir bench/data]
//        [--seed 1] [--reps 3] [--old-index FILE] [--new-index FILE] [--suggest]
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ROOT, parseArgs, savedSearchIndex, writeResults } from './common.mjs';

const args = parseArgs();
const log = (msg) => console.log(`[search-ab ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** Suggestions a call returns when it does not say (SUGGEST_DEFAULT_LIMIT), as the suggest case asks. */
const SUGGEST_LIMIT = 5;
/** Terms with another first page kept as examples per run (in the results file; the first is logged). */
const EXAMPLES = 5;

function loadBuild(root, file) {
  const require = createRequire(path.join(root, 'package.json'));
  const { CompanySearchIndex } = require(path.join(root, 'dist', 'src', 'search', 'company-search.js'));
  const { SnapshotReader } = require(path.join(root, 'dist', 'src', 'store', 'snapshot.js'));
  const index = CompanySearchIndex.load(file, SnapshotReader.keyOf(file));
  if (!index)
    throw new Error(
      `${root} cannot read ${file} (another snapshot version?): give it its own with --old-index or --new-index`,
    );
  return index;
}

/** One process: both builds loaded in the order given, every term searched by each in turn. */
function child({ first, builds, terms, reps, suggest }) {
  const loaded = {};
  for (const name of first === 'old' ? ['old', 'new'] : ['new', 'old'])
    loaded[name] = loadBuild(builds[name].root, builds[name].index);
  const criteria = (name) => ({ name, minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0 });
  const ask = suggest
    ? (index, term) => index.suggest(term, SUGGEST_LIMIT, false)
    : (index, term) => index.search(criteria(term));
  for (const term of terms.slice(0, 300)) for (const name of ['old', 'new']) ask(loaded[name], term);
  const ms = { old: 0, new: 0 };
  let different = 0;
  /** The first few terms whose answers differ, with the vids each build gave, to look into. */
  const examples = [];
  const vidsOf = (answer) => (answer.hits ?? answer).map((h) => h.vid);
  for (let r = 0; r < reps; r++) {
    terms.forEach((term, i) => {
      const answers = {};
      // Alternate which build searches a term first: the second finds some of its data cached.
      for (const name of (r + i) % 2 === 0 ? ['old', 'new'] : ['new', 'old']) {
        const started = performance.now();
        answers[name] = ask(loaded[name], term);
        ms[name] += performance.now() - started;
      }
      if (r === 0 && JSON.stringify(answers.old) !== JSON.stringify(answers.new)) {
        different++;
        if (examples.length < EXAMPLES)
          examples.push({ term, old: vidsOf(answers.old), new: vidsOf(answers.new) });
      }
    });
  }
  const searches = reps * terms.length;
  return {
    loaded_first: first,
    old_us: (1000 * ms.old) / searches,
    new_us: (1000 * ms.new) / searches,
    ratio: ms.new / ms.old,
    different_pages: different,
    examples,
  };
}

if (process.env.SEARCH_AB_CHILD === '1') {
  // A child reads its task from stdin: terms hold spaces and dashes that arguments would split.
  process.stdout.write(JSON.stringify(child(JSON.parse(fs.readFileSync(0, 'utf8')))));
} else {
  if (!args.old)
    throw new Error('--old <checkout> is required (a built checkout of the build to compare with)');
  const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
  const seed = Number(args.seed ?? 1);
  const reps = Number(args.reps ?? 3);
  const inputs = path.join(dataDir, 'dataset', `_bench_inputs_v1_${seed}.json`);
  if (!fs.existsSync(inputs)) throw new Error(`no ${inputs}: run bench/run.mjs on this data dir first`);
  const suggest = 'suggest' in args;
  const drawn = JSON.parse(fs.readFileSync(inputs, 'utf8')).search_terms;
  // As bench/run.mjs's suggest case types them: the first 3 to 8 characters of each search term.
  const terms = suggest ? drawn.map((t, i) => t.slice(0, 3 + (i % 6)).trim() || t) : drawn;
  const index = savedSearchIndex(dataDir);
  const builds = {
    old: { root: path.resolve(args.old), index: path.resolve(args['old-index'] ?? index) },
    new: { root: path.resolve(args.new ?? ROOT), index: path.resolve(args['new-index'] ?? index) },
  };
  const load = os.loadavg();
  log(
    `${suggest ? 'suggestions' : 'searches'}: old ${builds.old.root}, new ${builds.new.root}; ${terms.length} terms x ${reps}; load average ${load.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const runs = [];
  for (const first of ['old', 'new']) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
      input: JSON.stringify({ first, builds, terms, reps, suggest }),
      env: { ...process.env, SEARCH_AB_CHILD: '1' },
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) throw new Error(`the process loading ${first} first failed:\n${r.stderr}`);
    const run = JSON.parse(r.stdout);
    runs.push(run);
    log(
      `${first} loaded first: old ${run.old_us.toFixed(0)} µs, new ${run.new_us.toFixed(0)} µs ${suggest ? 'a suggestion' : 'a search'}, new/old ${run.ratio.toFixed(3)}, ${run.different_pages} terms with another first page`,
    );
    const [example] = run.examples;
    if (example)
      log(
        `  for example ${JSON.stringify(example.term)}: old ${example.old.join(' ')}; new ${example.new.join(' ')}`,
      );
  }
  const ratio = Math.sqrt(runs[0].ratio * runs[1].ratio);
  log(`new/old, geometric mean of both orders: ${ratio.toFixed(3)}`);
  const out = writeResults(suggest ? 'suggest-ab' : 'search-ab', {
    kind: suggest ? 'suggest' : 'search',
    load_before: load,
    builds,
    reps,
    terms: terms.length,
    runs,
    ratio,
  });
  log(`wrote ${out}`);
}

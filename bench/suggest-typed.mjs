// Whether suggestions find the company whose name is being typed: companies drawn at random from the
// dataset of bench/run.mjs (most of them small, as most companies are), each name typed three ways (its
// first half; its first two words and two letters of the third; the whole name), and each asked of the
// search index saved beside the embedded store of bench/run.mjs, in process, with subsidiaries included
// (a subsidiary is left out by default, which would say nothing of the name). Counts the share whose
// company (or one of the same name) is among the first `--limit` suggestions and the share where it is
// the first, and times the calls. Usage (after `npm run build` and a `bench/run.mjs` run):
//   node bench/suggest-typed.mjs [--data-dir bench/data] [--companies 500] [--seed 1] [--limit 10]
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, loadSavedSearchIndex, median, parseArgs, writeResults } from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const count = Number(args.companies ?? 500);
const seed = Number(args.seed ?? 1);
const limit = Number(args.limit ?? 10);

const { file, index } = loadSavedSearchIndex(dataDir);

/** The vid and name of one line of companies.csv (the name may be quoted). */
function vidAndName(line) {
  const comma = line.indexOf(',');
  let i = comma + 1;
  let name = '';
  if (line[i] === '"') {
    for (i++; ;) {
      const quote = line.indexOf('"', i);
      if (line[quote + 1] === '"') {
        name += line.slice(i, quote + 1);
        i = quote + 2;
      } else {
        name += line.slice(i, quote);
        break;
      }
    }
  } else name = line.slice(i, line.indexOf(',', i));
  return { vid: line.slice(0, comma), name };
}

/** `count` companies the index holds, drawn with a seeded generator from every line of the file. */
function drawCompanies() {
  const text = fs.readFileSync(path.join(dataDir, 'dataset', 'companies.csv'), 'utf8');
  const starts = [];
  for (let at = text.indexOf('\n') + 1; at > 0 && at < text.length; at = text.indexOf('\n', at) + 1)
    starts.push(at);
  let state = seed >>> 0 || 1;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const drawn = [];
  while (drawn.length < count) {
    const at = starts[Math.floor(next() * starts.length)];
    const company = vidAndName(text.slice(at, text.indexOf('\n', at)));
    if (index.has(company.vid)) drawn.push(company);
  }
  return drawn;
}

const WAYS = {
  'first half': (name) => name.slice(0, Math.max(6, Math.ceil(name.length / 2))),
  'two words and two letters': (name) => {
    const words = name.split(' ');
    return words.length > 2 ? `${words[0]} ${words[1]} ${words[2].slice(0, 2)}` : name;
  },
  'whole name': (name) => name,
};

const companies = drawCompanies();
for (const c of companies.slice(0, 50)) index.suggest(c.name, limit, true); // warm-up
const rows = [];
const micros = [];
for (const [way, type] of Object.entries(WAYS)) {
  let listed = 0;
  let first = 0;
  for (const c of companies) {
    const typed = type(c.name);
    const started = process.hrtime.bigint();
    const found = index.suggest(typed, limit, true);
    micros.push(Number(process.hrtime.bigint() - started) / 1000);
    const is = (s) => s.vid === c.vid || s.name === c.name;
    if (found.some(is)) listed++;
    if (found[0] && is(found[0])) first++;
  }
  rows.push({
    way,
    listed_pct: (100 * listed) / companies.length,
    first_pct: (100 * first) / companies.length,
  });
}
const sorted = [...micros].sort((a, b) => a - b);
const timing = { median_us: median(micros), p99_us: sorted[Math.floor(sorted.length * 0.99)] };
console.log(
  `\n${companies.length} companies, seed ${seed}, first ${limit} suggestions, subsidiaries included\n`,
);
console.log('| typed | company among the suggestions | company first |');
console.log('| --- | ---: | ---: |');
for (const r of rows) console.log(`| ${r.way} | ${r.listed_pct.toFixed(1)}% | ${r.first_pct.toFixed(1)}% |`);
console.log(
  `\nsuggest: median ${timing.median_us.toFixed(0)} µs, p99 ${timing.p99_us.toFixed(0)} µs in process`,
);
const out = writeResults('suggest-typed', { file, count, seed, limit, rows, timing });
console.log(`results: ${out}`);

// Timing script for the trigram candidate index (timed assertions are not allowed in tests).
// Usage: node --expose-gc bench/trigram-index.mjs [names=1000000] [queries=2000] [threshold=0.3] [corpus]
// corpus "diverse" (default): brand words from a large random vocabulary, as in real company registers,
// plus shared words, legal suffixes, acronyms and some Cyrillic and CJK names. corpus "stress": every
// brand is built from 60 syllables, so every trigram is common; a worst case for trigram filtering.
// Loads the TypeScript sources through the project's compiler, so it needs no build step.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const ts = require('typescript');
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    fileName: filename,
  });
  module._compile(outputText, filename);
};
const root = fileURLToPath(new URL('..', import.meta.url));
const { TrigramIndexBuilder } = require(`${root}src/search/trigram-index.ts`);

const size = Number(process.argv[2] ?? 1_000_000);
const queryCount = Number(process.argv[3] ?? 2000);
const threshold = Number(process.argv[4] ?? 0.3);
const corpus = process.argv[5] ?? 'diverse';

// Deterministic xorshift32 so runs are comparable.
let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};
const pick = (list, skew = 1) => list[Math.floor(list.length * rand() ** skew)];

const capital = (w) => w[0].toUpperCase() + w.slice(1);
const brands = [];
if (corpus === 'stress') {
  const syllables = (
    'ac me bo e ing gen er al tech tron vo lar sun kor mi ta ra ka zen dor fi nex qu an tum star lin ' +
    'ver sa pol gran ite ex ion cor bel mont ri co lu ster ham wick ford ley ton berg stein feld mann son dale ridge wood'
  ).split(' ');
  for (let i = 0; i < 30000; i++) {
    let w = '';
    const parts = 2 + Math.floor(rand() * 2);
    for (let k = 0; k < parts; k++) w += pick(syllables);
    brands.push(capital(w));
  }
} else {
  const onsets = 'b c d f g h j k l m n p r s t v w z ch sh th st tr br kr pl gr sch zh x qu'.split(' ');
  const vowels = 'a e i o u y ai ou ei ea io ue ä ö ü é'.split(' ');
  const codas = ['', '', '', 'n', 'r', 's', 'l', 't', 'ng', 'ck', 'x', 'm'];
  const cyrillic = 'абвгдежзиклмнопрстуфхцчшыэюя';
  for (let i = 0; i < 400000; i++) {
    const r = rand();
    let w = '';
    if (r < 0.06) {
      for (let k = 0, len = 2 + Math.floor(rand() * 3); k < len; k++)
        w += String.fromCharCode(65 + Math.floor(rand() * 26));
    } else if (r < 0.08) {
      for (let k = 0, len = 2 + Math.floor(rand() * 3); k < len; k++)
        w += String.fromCodePoint(0x4e00 + Math.floor(rand() * 3000));
    } else if (r < 0.11) {
      for (let k = 0, len = 4 + Math.floor(rand() * 6); k < len; k++)
        w += cyrillic[Math.floor(rand() * cyrillic.length)];
      w = capital(w);
    } else {
      for (let k = 0, parts = 2 + Math.floor(rand() * 2); k < parts; k++)
        w += pick(onsets) + pick(vowels) + pick(codas);
      w = capital(w);
    }
    brands.push(w);
  }
}
brands.push(
  ...'Acme Boeing General Müller Société Nestlé Škoda Ørsted Straße Türk İstanbul 東京 Газпром'.split(' '),
);
const shared = (
  'Holdings Industrial Industries Group International Systems Technologies Global Manufacturing Logistics ' +
  'Energy Electric General American Pacific Capital Partners Services Solutions Aerospace Motors Foods Chemicals Steel ' +
  'Pharma Networks Trading Supply Components Precision Metals Plastics Textiles Electronics Semiconductor Materials ' +
  'Engineering Construction Mining Shipping Marine Auto Parts'
).split(' ');
const suffixes = (
  'Inc.|Inc|LLC|Ltd|Ltd.|Co.|Co., Ltd.|Corp.|Corporation|GmbH|AG|S.A.|SA|S.p.A.|B.V.|N.V.|PLC|Pty Ltd|' +
  '& Sons|& Co.|Limited|KK|SAS|Oy|AB|A/S'
).split('|');

function makeName() {
  const words = [pick(brands, 2)];
  if (rand() < 0.3) words.push(pick(brands, 2));
  const extra = Math.floor(rand() * 3);
  for (let k = 0; k < extra; k++) words.push(pick(shared, 1.5));
  if (rand() < 0.8) words.push(pick(suffixes, 1.5));
  return words.join(' ');
}

function makeQuery(names) {
  const name = names[Math.floor(rand() * names.length)];
  const words = name.split(' ');
  const r = rand();
  if (r < 0.35) return { kind: 'full name', text: name };
  if (r < 0.5) return { kind: 'full name', text: name.toLowerCase().replace(/[.,&]/g, '') };
  if (r < 0.65) return { kind: 'fragment', text: words[0].slice(0, 3 + Math.floor(rand() * 3)) };
  if (r < 0.85)
    return { kind: 'fragment', text: `${words[0]} ${(words[1] ?? pick(shared)).slice(0, 4)}`.toLowerCase() };
  return { kind: 'fragment', text: `${words[0]} ${pick(shared)}` };
}

const heap = () => {
  globalThis.gc?.();
  return process.memoryUsage();
};
const before = heap();
let t0 = performance.now();
const builder = new TrigramIndexBuilder();
const names = [];
for (let d = 0; d < size; d++) {
  const name = makeName();
  names.push(name);
  builder.add(name);
}
const addMs = performance.now() - t0;
t0 = performance.now();
const index = builder.build();
const buildMs = performance.now() - t0;
const after = heap();
const weights = new Int32Array(size);
for (let d = 0; d < size; d++) weights[d] = Math.floor(rand() * 100);

const queries = Array.from({ length: queryCount }, () => makeQuery(names));
for (const q of queries.slice(0, 200)) index.search(q.text, { threshold, limit: 20, offset: 0, weights }); // warm-up
const times = { all: [], 'full name': [], fragment: [] };
let totalMatches = 0;
const slow = [];
for (const q of queries) {
  const s = performance.now();
  const r = index.search(q.text, { threshold, limit: 20, offset: 0, weights });
  const ms = performance.now() - s;
  times.all.push(ms);
  times[q.kind].push(ms);
  slow.push([ms, q.text]);
  totalMatches += r.matches.length;
}
const mb = (b) => (b / 1048576).toFixed(0);
console.log(`corpus: ${corpus}, names: ${size}, queries: ${queryCount}, threshold: ${threshold}, limit 20`);
console.log(`add (trigram sets): ${addMs.toFixed(0)} ms, build: ${buildMs.toFixed(0)} ms`);
console.log(
  `index arrays: ${mb(index.byteLength)} MB; process rss ${mb(after.rss)} MB, arrayBuffers ` +
    `${mb(after.arrayBuffers)} MB (before: rss ${mb(before.rss)} MB; names kept as JS strings for the queries)`,
);
for (const [kind, list] of Object.entries(times)) {
  list.sort((a, b) => a - b);
  const at = (p) => list[Math.min(list.length - 1, Math.floor(p * list.length))].toFixed(2);
  console.log(
    `${kind} (${list.length}): median ${at(0.5)} ms, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}`,
  );
}
console.log(`mean results per query: ${(totalMatches / queryCount).toFixed(1)}`);
slow.sort((a, b) => b[0] - a[0]);
console.log(
  'slowest:',
  slow
    .slice(0, 5)
    .map(([ms, q]) => `${JSON.stringify(q)} ${ms.toFixed(2)} ms`)
    .join('; '),
);

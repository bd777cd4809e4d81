// Cold-start benchmark: starts the built server (dist/) on a copy of the embedded store of
// bench/run.mjs with some of its derived files missing, as after an upgrade that changes their
// layout or a lost file, and times how long the server takes to be ready and to rebuild them,
// its largest RSS meanwhile, what it logged at warn level or above, and whether a search, a
// profile and a hub's first supplier page then answer 200. Usage (after `npm run build`):
//   node bench/cold-start.mjs [--data-dir bench/data] [--remove search-index,point-reads,walk-memory,all,none]
//                             [--settle 1800] [--cli dist/src/cli/main.js]
// Each comma-separated entry of --remove is one start; `all` removes the three files at once, so
// their full reads of the graph run side by side; `none` keeps every one, as a server starts on
// the files an import left (the start-up goal of bench/README.md). The graph is copied into a
// temporary directory once (deleted at the end); the derived files kept are hard-linked into it
// (the server replaces a derived file by renaming a new one over it, never writes into it), so the
// store of bench/run.mjs is never written. Results go to bench/results/cold-start-<timestamp>.json.
import fs from 'node:fs';
import path from 'node:path';
import { CLI, ROOT, parseArgs, serveEnv, serveUntilSettled, writeResults } from './common.mjs';

const DERIVED = ['search-index', 'point-reads', 'walk-memory'];
const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const settleS = Number(args.settle ?? 1800);
const cli = path.resolve(args.cli ?? CLI);
const scenarios = (args.remove ?? [...DERIVED, 'all'].join(','))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const s of scenarios)
  if (s !== 'all' && s !== 'none' && !DERIVED.includes(s))
    throw new Error(`--remove takes ${DERIVED.join(', ')}, all or none, not "${s}"`);

const log = (s) => process.stderr.write(`[cold-start] ${s}\n`);
const graphDir = path.join(dataDir, 'store', 'graph');
if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
if (!fs.existsSync(path.join(graphDir, 'CURRENT')))
  throw new Error(`no embedded store in ${graphDir}: run bench/run.mjs first`);
const current = fs.readFileSync(path.join(graphDir, 'CURRENT'), 'utf8').trim();
const derivedFile = (dir, kind) => path.join(dir, `${current}.${kind}`);
const missing = DERIVED.filter((k) => !fs.existsSync(derivedFile(graphDir, k)));
if (missing.length)
  throw new Error(
    `${graphDir} lacks ${missing.join(', ')}: start a server on it once (bench/run.mjs) so every derived file is there to remove`,
  );

/**
 * The files of one kind of derived file in `dir`: the file itself and those beside it that belong to
 * it, such as the edges an import keeps for the point-read file (`<generation>.point-reads.edges-…`,
 * which the point-read file names). Leaving one out makes the server write the whole file anew.
 */
function filesOf(dir, kind) {
  const file = `${current}.${kind}`;
  return fs.readdirSync(dir).filter((f) => f === file || f.startsWith(`${file}.`));
}

/** One start with `removed` missing (see serveUntilSettled), and the derived files it left. */
async function start(work, removed) {
  const graph = path.join(work, 'store', 'graph');
  for (const f of fs.readdirSync(graph))
    if (f !== 'CURRENT' && f !== current) fs.rmSync(path.join(graph, f), { force: true });
  for (const kind of DERIVED)
    if (!removed.includes(kind))
      for (const f of filesOf(graphDir, kind)) fs.linkSync(path.join(graphDir, f), path.join(graph, f));
  const r = await serveUntilSettled({
    cli,
    dataDir: path.join(work, 'store'),
    datasetDir: path.join(dataDir, 'dataset'),
    settleS,
  });
  const written = Object.fromEntries(
    DERIVED.map((k) => {
      const files = filesOf(graph, k);
      return [k, files.length ? files.reduce((n, f) => n + fs.statSync(path.join(graph, f)).size, 0) : null];
    }),
  );
  return { removed, ...r, written };
}

async function main() {
  const work = fs.mkdtempSync(path.join(path.dirname(dataDir), 'tiergraph-cold-start-'));
  const cleanup = () => fs.rmSync(work, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    fs.mkdirSync(path.join(work, 'store', 'graph'), { recursive: true });
    const secret = path.join(dataDir, 'store', 'download-secret');
    if (fs.existsSync(secret)) fs.copyFileSync(secret, path.join(work, 'store', 'download-secret'));
    log(`copying ${current} from ${graphDir} to ${work}`);
    for (const f of ['CURRENT', current])
      fs.copyFileSync(path.join(graphDir, f), path.join(work, 'store', 'graph', f));
    // The C library's arenas the server had (serveEnv): the image's 2 unless this process set another.
    const mallocArenaMax = serveEnv(cli).MALLOC_ARENA_MAX ?? null;
    const results = [];
    for (const s of scenarios) {
      const removed = s === 'all' ? DERIVED : s === 'none' ? [] : [s];
      log(`start without ${removed.join(', ') || 'nothing'}, MALLOC_ARENA_MAX=${mallocArenaMax ?? 'unset'}`);
      const r = await start(work, removed);
      results.push(r);
      log(
        `ready ${r.readyS} s, settled ${r.settledS} s, RSS peak ${r.rssPeakMiB} MiB (sampled) ${r.vmHwmMiB} MiB (VmHWM), checks ${JSON.stringify(r.checks)}, ${r.warnings.length} warnings`,
      );
    }
    console.log(
      '\n| removed | ready | settled | RSS peak (sampled) | VmHWM | search, profile, suppliers | warnings |',
    );
    console.log('|---|---:|---:|---:|---:|---|---:|');
    for (const r of results)
      console.log(
        `| ${r.removed.join(', ') || 'nothing'} | ${r.readyS} s | ${r.settledS} s | ${r.rssPeakMiB} MiB | ${r.vmHwmMiB} MiB | ${Object.values(r.checks).join(', ')} | ${r.warnings.length} |`,
      );
    const out = writeResults('cold-start', {
      dataDir,
      cli,
      settleS,
      mallocArenaMax,
      results,
    });
    console.log(`\nresults: ${out}`);
    const failed = results.some(
      (r) => r.warnings.some((w) => w.level >= 50) || Object.values(r.checks).some((c) => c !== 200),
    );
    process.exitCode = failed ? 1 : 0;
  } finally {
    cleanup();
  }
}

await main();

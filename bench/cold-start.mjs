// Cold-start benchmark: starts the built server (dist/) on a copy of the embedded store of
// bench/run.mjs with some of its derived files missing, as after an upgrade that changes their
// layout or a lost file, and times how long the server takes to be ready and to rebuild them,
// its largest RSS meanwhile, what it logged at warn level or above, and whether a search, a
// profile and a hub's first supplier page then answer 200. Usage (after `npm run build`):
//   node bench/cold-start.mjs [--data-dir bench/data] [--remove search-index,point-reads,walk-memory,all]
//                             [--settle 1800] [--cli dist/src/cli/main.js]
// Each comma-separated entry of --remove is one start; `all` removes the three files at once, so
// their full reads of the graph run side by side. The graph is copied into a temporary directory
// once (deleted at the end); the derived files kept are hard-linked into it (the server replaces
// a derived file by renaming a new one over it, never writes into it), so the store of
// bench/run.mjs is never written. Results go to bench/results/cold-start-<timestamp>.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, ROOT, freePort, parseArgs, rssBytes, sleep, writeResults } from './common.mjs';

const KEY = 'tiergraph-bench-key-000000000000';
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
  if (s !== 'all' && !DERIVED.includes(s))
    throw new Error(`--remove takes ${DERIVED.join(', ')} or all, not "${s}"`);

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

async function getJson(url) {
  try {
    const r = await fetch(url, { headers: { 'X-SERVICE-KEY': KEY }, signal: AbortSignal.timeout(5000) });
    return { status: r.status, body: await r.json().catch(() => null) };
  } catch {
    return { status: 0, body: null };
  }
}

/** The first company of the dataset (its second line's first field). */
function firstVid() {
  const fd = fs.openSync(path.join(dataDir, 'dataset', 'companies.csv'), 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const text = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0)).toString('utf8');
    const vid = text.split('\n')[1]?.split(',')[0];
    if (!vid) throw new Error('no company in companies.csv');
    return vid;
  } finally {
    fs.closeSync(fd);
  }
}

/** One start with `removed` missing: when each derived state first read ready, the RSS peak, the log. */
async function start(work, removed) {
  const graph = path.join(work, 'store', 'graph');
  for (const f of fs.readdirSync(graph))
    if (f !== 'CURRENT' && f !== current) fs.rmSync(path.join(graph, f), { force: true });
  for (const kind of DERIVED)
    if (!removed.includes(kind)) fs.linkSync(derivedFile(graphDir, kind), derivedFile(graph, kind));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const at = () => Math.round(performance.now() - started) / 1000;
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: path.join(work, 'store'),
      STORE: 'embedded',
      PORT: String(port),
      HOST: '127.0.0.1',
      API_KEYS: KEY,
      API_KEY_HEADER: 'X-SERVICE-KEY',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      READ_CACHE_ENTRIES: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const warnings = [];
  let tail = '';
  const onLog = (d) => {
    tail = (tail + d).slice(-4000);
    for (const line of String(d).split('\n')) {
      if (!line.trim()) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = { level: 50, msg: line };
      }
      if ((entry.level ?? 0) >= 40 && warnings.length < 20)
        warnings.push({ at: at(), level: entry.level, msg: entry.msg, err: entry.err?.message });
    }
  };
  child.stdout.on('data', onLog);
  child.stderr.on('data', onLog);
  let exited = null;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  let rssPeak = 0;
  let readyAt = null;
  const firstSeen = {};
  let derived = {};
  try {
    for (;;) {
      if (exited) throw new Error(`server exited (${JSON.stringify(exited)}): ${tail}`);
      rssPeak = Math.max(rssPeak, rssBytes(child.pid) ?? 0);
      const r = await getJson(`${base}/readyz`);
      if (r.status === 200 && readyAt === null) readyAt = at();
      derived = r.body?.derived ?? derived;
      for (const [k, state] of Object.entries(derived)) {
        const key = `${k}:${state}`;
        if (!(key in firstSeen)) firstSeen[key] = at();
      }
      const building = Object.values(derived).includes('building');
      if ((readyAt !== null && !building) || at() > settleS) break;
      await sleep(1000);
    }
    const settledAt = at();
    const vid = firstVid();
    const checks = {
      search: (await getJson(`${base}/v1/companies/?name=precision`)).status,
      profile: (await getJson(`${base}/v1/companies/${vid}/`)).status,
      suppliers: (await getJson(`${base}/v1/companies/${vid}/suppliers/?limit=10`)).status,
    };
    rssPeak = Math.max(rssPeak, rssBytes(child.pid) ?? 0);
    const written = Object.fromEntries(
      DERIVED.map((k) => [
        k,
        fs.existsSync(derivedFile(graph, k)) ? fs.statSync(derivedFile(graph, k)).size : null,
      ]),
    );
    return {
      removed,
      readyS: readyAt,
      settledS: settledAt,
      derived,
      firstSeen,
      rssPeakMiB: Math.round(rssPeak / 2 ** 20),
      checks,
      written,
      warnings,
    };
  } finally {
    child.kill('SIGTERM');
    for (let i = 0; i < 300 && !exited; i++) await sleep(100);
    if (!exited) child.kill('SIGKILL');
  }
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
    const results = [];
    for (const s of scenarios) {
      const removed = s === 'all' ? DERIVED : [s];
      log(`start without ${removed.join(', ')}`);
      const r = await start(work, removed);
      results.push(r);
      log(
        `ready ${r.readyS} s, settled ${r.settledS} s, RSS peak ${r.rssPeakMiB} MiB, checks ${JSON.stringify(r.checks)}, ${r.warnings.length} warnings`,
      );
    }
    console.log('\n| removed | ready | settled | RSS peak | search, profile, suppliers | warnings |');
    console.log('|---|---:|---:|---:|---|---:|');
    for (const r of results)
      console.log(
        `| ${r.removed.join(', ')} | ${r.readyS} s | ${r.settledS} s | ${r.rssPeakMiB} MiB | ${Object.values(r.checks).join(', ')} | ${r.warnings.length} |`,
      );
    const out = writeResults('cold-start', { dataDir, cli, settleS, results });
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

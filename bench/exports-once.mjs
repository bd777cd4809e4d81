// Exactly-once benchmark for tier-view exports: runs the built server (dist/) on a
// copy of an existing store with a short lock lifetime, posts many runs at once,
// and counts from the server's own log how often each run was started, then
// downloads every file a SUCCESS run points at. Usage (after `npm run build`):
//   node bench/exports-once.mjs [--data-dir bench/data] [--runs 50] [--lock-s 10] [--tiers 1,2,3] [--cli dist/src/cli/main.js]
// (`--cli` runs another build, e.g. an older version, for a before/after comparison.)
// The store is read from <data-dir>/store/graph and copied to a temporary
// directory first (deleted at the end), so the benchmark never writes to it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import {
  CLI,
  ROOT,
  freePort,
  parseArgs,
  profileReads,
  serveArgs,
  serveEnv,
  sleep,
  untilReady,
  SERVE_KEY,
} from './common.mjs';

const KEY = SERVE_KEY;
const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 50);
const lockS = Number(args['lock-s'] ?? 10);
const tiers = (args.tiers ?? '1,2,3').split(',').map(Number);
const minDate = args['min-date'] ?? '2015-01-01';
const cli = path.resolve(args.cli ?? CLI);

const log = (s) => process.stderr.write(`[exports-once] ${s}\n`);

/** Companies with the most suppliers, from the dataset (bench/tierview.mjs's cache when there; nothing is written). */
async function topRoots(n) {
  const cache = path.join(dataDir, 'dataset', '_tierview_roots.json');
  if (fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8')).slice(0, n);
  const rl = readline.createInterface({
    input: fs.createReadStream(path.join(dataDir, 'dataset', 'relationships.csv')),
  });
  let customer = -1;
  const counts = new Map();
  for await (const line of rl) {
    const parts = line.split(',');
    if (customer < 0) {
      customer = parts.indexOf('customer_id');
      continue;
    }
    counts.set(parts[customer], (counts.get(parts[customer]) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([vid, suppliers]) => ({ vid, suppliers }));
}

async function main() {
  const roots = await topRoots(runs);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-exports-once-'));
  const store = path.join(work, 'store');
  fs.mkdirSync(path.join(store, 'graph'), { recursive: true });
  log(`copying ${path.join(dataDir, 'store', 'graph')} to ${store}`);
  for (const f of fs.readdirSync(path.join(dataDir, 'store', 'graph'))) {
    fs.copyFileSync(path.join(dataDir, 'store', 'graph', f), path.join(store, 'graph', f));
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, serveArgs(cli), {
    env: {
      ...serveEnv(cli),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: store,
      API_KEYS: KEY,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '10000000',
      JOBS_POLL_MS: '100',
      JOB_LOCK_S: String(lockS),
      // All runs come from one key: let it queue them all.
      JOBS_MAX_QUEUED_PER_KEY: String(Math.max(20, runs)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Starts of an attempt (logged since exports take effect once), and exports that
  // finished (logged by older versions too, also by an attempt that then lost).
  const starts = new Map();
  const exported = new Map();
  let errorLines = 0;
  readline.createInterface({ input: server.stdout }).on('line', (line) => {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.msg === 'tier view attempt started')
      starts.set(entry.run_id, (starts.get(entry.run_id) ?? 0) + 1);
    if (entry.msg === 'tier view exported') exported.set(entry.run_id, (exported.get(entry.run_id) ?? 0) + 1);
    if (entry.level >= 50) errorLines++;
  });
  const stop = () => server.kill('SIGTERM');
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    await untilReady(base);
    const headers = { 'X-SERVICE-KEY': KEY, 'content-type': 'application/json' };
    const poll = async (id) => (await fetch(`${base}/v1/jobs/${id}`, { headers })).json();
    const vids = roots.map((r) => r.vid);
    const t0 = performance.now();
    const ids = await Promise.all(
      vids.map(async (vid, i) => {
        const res = await fetch(`${base}/v1/tierviewjob/`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            root_nodes: vid,
            num_tiers: String(tiers[i % tiers.length]),
            direction: i % 2 ? 'customer' : 'supplier',
            min_evid_date: minDate,
          }),
        });
        if (!res.ok) throw new Error(`POST ${res.status}: ${await res.text()}`);
        return (await res.json()).run_id;
      }),
    );
    const reads = profileReads(base, KEY, vids);
    let states;
    for (;;) {
      states = await Promise.all(ids.map(poll));
      if (states.every((s) => !['PENDING', 'RUNNING'].includes(s.state.life_cycle_state))) break;
      await sleep(250);
    }
    const seconds = (performance.now() - t0) / 1000;
    reads.stop();
    const readResult = await reads;
    const ends = {};
    let notDownloadable = 0;
    for (const s of states) {
      ends[s.state.result_state] = (ends[s.state.result_state] ?? 0) + 1;
      if (s.state.result_state !== 'SUCCESS') continue;
      for (const link of Object.values(JSON.parse(s.output.result))) {
        const res = await fetch(link);
        const text = await res.text();
        if (res.status !== 200 || !text.includes('\r\n')) notDownloadable++;
      }
    }
    const result = {
      machine: `${os.cpus().length} x ${os.cpus()[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
      store: path.join(dataDir, 'store'),
      runs: ids.length,
      lockS,
      tiers,
      ends,
      startedMoreThanOnce: ids.filter((id) => (starts.get(id) ?? 0) > 1).length,
      exportedMoreThanOnce: ids.filter((id) => (exported.get(id) ?? 0) > 1).length,
      successNotDownloadable: notDownloadable,
      errorLogLines: errorLines,
      seconds,
      readsPerS: readResult.requests.average,
      readP50: readResult.latency.p50,
      readP99: readResult.latency.p99,
      readErrors: readResult.errors + readResult.non2xx,
    };
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    const out = path.join(
      ROOT,
      'bench',
      'results',
      `exports-once-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    fs.writeFileSync(out, JSON.stringify(result, null, 2));
    console.log(JSON.stringify(result, null, 2));
    log(`written to ${out}`);
  } finally {
    stop();
    await new Promise((r) => server.once('exit', r));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

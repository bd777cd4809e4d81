// Tier-view export benchmark: runs the built server (dist/) on an existing store
// and measures, over real HTTP, the time from POST /v1/tierviewjob/ to SUCCESS,
// the rows written, server RSS during each export, and read latency while many
// exports queue. Usage (after `npm run build` and a `bench/run.mjs` import):
//   node bench/tierview.mjs [--data-dir bench/data] [--runs 3] [--tiers 1,2,3,4,6] [--batch 50]
//                           [--store embedded|neo4j] [--neo4j-uri bolt://HOST:PORT]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import {
  ROOT,
  freePort,
  median,
  parseArgs,
  profileReads,
  rssBytes,
  serveArgs,
  serveEnv,
  settle,
  sleep,
  untilReady,
  SERVE_KEY,
} from './common.mjs';

const KEY = SERVE_KEY;

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 3);
const tierList = (args.tiers ?? '1,2,3,4,6').split(',').map(Number);
const batch = Number(args.batch ?? 50);
// What the server builds in the background after start (the heads of long lists, the
// relationships for tier walks, the point-read file: at 1M about 16 s from the embedded engine,
// about three minutes from Neo4j the first time, seconds from the saved files after that) is
// waited for, as /readyz reports it, at most this long before the first export, so that runs
// measure the server as it serves once settled.
const settleS = Number(args.settle ?? 600);
// More request fields for the single-root runs, as JSON: '{"min_confidence":0.5}'.
const extraRequest = args.request ? JSON.parse(args.request) : {};
const minDate = args['min-date'] ?? '2015-01-01';
// The store of bench/run.mjs with the same --store: embedded in <data-dir>/store, or the Neo4j server it imported into.
const store = args.store ?? 'embedded';
const neo4jUri = args['neo4j-uri'] ?? process.env.NEO4J_URI;
if (!['embedded', 'neo4j'].includes(store) || (store === 'neo4j' && !neo4jUri)) {
  process.stderr.write('tierview: --store takes embedded or neo4j; neo4j needs --neo4j-uri (or NEO4J_URI)\n');
  process.exit(2);
}
const storeEnv =
  store === 'neo4j'
    ? {
        DATA_DIR: path.join(dataDir, 'store-neo4j'),
        STORE: 'neo4j',
        NEO4J_URI: neo4jUri,
        NEO4J_USER: process.env.NEO4J_USER ?? 'neo4j',
        NEO4J_PASSWORD: process.env.NEO4J_PASSWORD ?? 'neo4j',
      }
    : { DATA_DIR: path.join(dataDir, 'store'), STORE: 'embedded' };

const rss = (pid) => rssBytes(pid) ?? 0;
const log = (s) => process.stderr.write(`[tierview-bench] ${s}\n`);

/** Customers with the most suppliers, from the dataset's relationships file (cached beside it). */
async function topRoots(n) {
  const cache = path.join(dataDir, 'dataset', '_tierview_roots.json');
  if (fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8')).slice(0, n);
  const file = path.join(dataDir, 'dataset', 'relationships.csv');
  const rl = readline.createInterface({ input: fs.createReadStream(file) });
  let cols = null;
  const counts = new Map();
  for await (const line of rl) {
    const parts = line.split(',');
    if (!cols) {
      cols = { customer: parts.indexOf('customer_id') };
      continue;
    }
    const c = parts[cols.customer];
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 200)
    .map(([vid, suppliers]) => ({ vid, suppliers }));
  fs.writeFileSync(cache, JSON.stringify(top));
  return top.slice(0, n);
}

async function main() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const roots = await topRoots(Math.max(batch, 1));
  log(`root with the most suppliers: ${roots[0].vid} (${roots[0].suppliers} suppliers)`);
  const server = spawn(process.execPath, serveArgs(), {
    env: {
      ...serveEnv(),
      PORT: String(port),
      HOST: '127.0.0.1',
      ...storeEnv,
      API_KEYS: KEY,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '10000000',
      JOBS_POLL_MS: '100',
      // The batch is posted from one key: its quota of queued runs must hold them all.
      JOBS_MAX_QUEUED_PER_KEY: String(Math.max(20, batch)),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stop = () => server.kill('SIGTERM');
  // The runs this bench started: their files are removed at the end, or they would fill the key's
  // share of the export disk (EXPORT_MAX_BYTES_PER_KEY) within a few dozen runs of 6 tiers.
  const posted = [];
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    await untilReady(base);
    if (settleS > 0) {
      log(`ready; waiting until it builds nothing in the background, at most ${settleS} s (--settle)`);
      const settled = await settle(base, { maxS: settleS });
      log(`settled after ${settled.seconds.toFixed(0)} s: ${JSON.stringify(settled.derived)}`);
    }
    const headers = { 'X-SERVICE-KEY': KEY, 'content-type': 'application/json' };
    const post = async (body) => {
      const res = await fetch(`${base}/v1/tierviewjob/`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`POST ${res.status}: ${await res.text()}`);
      const { run_id: id } = await res.json();
      posted.push(id);
      return id;
    };
    const poll = async (id) => (await fetch(`${base}/v1/jobs/${id}`, { headers })).json();

    const single = [];
    for (const tiers of tierList) {
      const times = [];
      const growths = [];
      let rows = null;
      let bytes = null;
      for (let r = 0; r < runs; r++) {
        const before = rss(server.pid);
        let peak = before;
        const t0 = performance.now();
        const id = await post({
          root_nodes: args.root ?? roots[0].vid,
          num_tiers: String(tiers),
          direction: 'supplier',
          min_evid_date: minDate,
          output_multiple_tables: 'no',
          ...extraRequest,
        });
        let job;
        for (;;) {
          peak = Math.max(peak, rss(server.pid));
          job = await poll(id);
          if (job.state.life_cycle_state !== 'PENDING' && job.state.life_cycle_state !== 'RUNNING') break;
          await sleep(args.root ? 5 : 50);
        }
        const ms = performance.now() - t0;
        if (job.state.result_state !== 'SUCCESS') throw new Error(`run ${id}: ${JSON.stringify(job.state)}`);
        // One file, or three with output_multiple_tables: rows and bytes of all of them.
        rows = 0;
        bytes = 0;
        for (const link of Object.values(JSON.parse(job.output.result))) {
          const csv = await (await fetch(link)).text();
          rows += csv.split('\r\n').filter(Boolean).length - 1;
          bytes += Buffer.byteLength(csv);
        }
        times.push(ms);
        growths.push(peak - before);
        log(
          `tiers ${tiers} run ${r + 1}: ${(ms / 1000).toFixed(2)} s, ${rows} rows, RSS +${Math.round((peak - before) / 2 ** 20)} MiB`,
        );
      }
      single.push({
        tiers,
        rows,
        bytes,
        seconds: median(times) / 1000,
        rowsPerS: rows / (median(times) / 1000),
        rssGrowthMiB: median(growths) / 2 ** 20,
        times,
      });
    }

    // Many runs at once, with profile reads alongside (none with --batch 0).
    const vids = batch > 0 ? roots.slice(0, batch).map((r) => r.vid) : [];
    const t0 = performance.now();
    const ids = await Promise.all(
      vids.map((vid, i) =>
        post({
          root_nodes: vid,
          num_tiers: String((i % 3) + 1),
          direction: i % 2 ? 'customer' : 'supplier',
          min_evid_date: minDate,
        }),
      ),
    );
    let finished = false;
    const reads = vids.length === 0 ? null : profileReads(base, KEY, vids);
    const ends = {};
    while (!finished && ids.length > 0) {
      const states = await Promise.all(ids.map(poll));
      finished = states.every(
        (s) => s.state.life_cycle_state === 'TERMINATED' || s.state.life_cycle_state === 'INTERNAL_ERROR',
      );
      if (finished)
        for (const s of states) ends[s.state.result_state] = (ends[s.state.result_state] ?? 0) + 1;
      else await sleep(250);
    }
    const batchSeconds = (performance.now() - t0) / 1000;
    reads?.stop();
    const readResult = await reads;

    const result = {
      machine: `${os.cpus().length} x ${os.cpus()[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
      store: store === 'neo4j' ? `neo4j (${neo4jUri})` : 'embedded',
      root: roots[0],
      min_evid_date: minDate,
      request: extraRequest,
      single,
      batch: readResult && {
        jobs: ids.length,
        distinctIds: new Set(ids).size,
        ends,
        seconds: batchSeconds,
        readsPerS: readResult.requests.average,
        readP50: readResult.latency.p50,
        readP99: readResult.latency.p99,
        readErrors: readResult.errors + readResult.non2xx,
      },
    };
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    const out = path.join(
      ROOT,
      'bench',
      'results',
      `tierview-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    fs.writeFileSync(out, JSON.stringify(result, null, 2));
    console.log(JSON.stringify(result, null, 2));
    log(`written to ${out}`);
  } finally {
    stop();
    if (store === 'embedded' && posted.length > 0) {
      await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()));
      const runs = path.join(storeEnv.DATA_DIR, 'exports', 'runs');
      for (const id of posted) fs.rmSync(path.join(runs, String(id)), { recursive: true, force: true });
      log(`removed the files of the ${posted.length} runs it started`);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

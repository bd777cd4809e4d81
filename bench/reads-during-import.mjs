// Reads while an import replaces the graph under a running server: the built server (dist/) on the
// embedded store of bench/run.mjs, profile and edge reads over HTTP before, during and after a
// `tiergraph import` of the same dataset into the same DATA_DIR, as an operator would run it.
// Usage (after `npm run build` and a `bench/run.mjs` import):
//   node bench/reads-during-import.mjs [--data-dir bench/data] [--phase-s 15] [--connections 8] [--settle 600]
//                                      [--log-level info]   (the server's log, on stderr; default warn)
// The store ends at a new generation of the same data, as after any import.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import {
  CLI,
  ROOT,
  eachCsvRow,
  freePort,
  parseArgs,
  serveArgs,
  serveEnv,
  settle,
  sleep,
  untilReady,
  writeResults,
  SERVE_KEY,
} from './common.mjs';

const KEY = SERVE_KEY;
const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const dataset = path.join(dataDir, 'dataset');
const storeDir = path.join(dataDir, 'store');
const phaseS = Number(args['phase-s'] ?? 15);
const connections = Number(args.connections ?? 8);
const settleS = Number(args.settle ?? 600);
const log = (s) => process.stderr.write(`[reads-during-import] ${s}\n`);

/** The first `n` values of `column` in a dataset file. */
async function firstValues(file, column, n) {
  const out = [];
  try {
    await eachCsvRow(path.join(dataset, file), [[column]], ([v]) => {
      out.push(v);
      if (out.length === n) throw new Error('enough');
    });
  } catch (err) {
    if (err.message !== 'enough') throw err;
  }
  return out;
}

/** Profile and edge reads in turn, of random keys, until stopped; resolves with autocannon's result. */
function reads(base, vids, edges) {
  let turn = 0;
  const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];
  return autocannon({
    url: base,
    connections,
    duration: 24 * 3600,
    headers: { 'X-SERVICE-KEY': KEY },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          path: turn++ % 2 ? `/v1/edges/${pick(edges)}/` : `/v1/companies/${pick(vids)}/`,
        }),
      },
    ],
  });
}

/** What a phase's reads gave. */
function summary(result, seconds) {
  return {
    seconds: Math.round(seconds * 10) / 10,
    requests: result.requests.total,
    rps: Math.round(result.requests.total / seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/**
 * The ETag of a profile read: it names the data version (the store's and the search index's
 * generations), so it changes once the server has switched to the new generation.
 */
async function dataTag(base, vid) {
  const res = await fetch(`${base}/v1/companies/${vid}/`, { headers: { 'X-SERVICE-KEY': KEY } });
  await res.arrayBuffer();
  const tag = res.headers.get('etag');
  if (!res.ok || !tag) throw new Error(`profile read gave ${res.status} without an ETag`);
  return tag;
}

/** Runs reads until `until` resolves; returns their summary. */
async function phase(base, vids, edges, until) {
  const started = performance.now();
  const run = reads(base, vids, edges);
  await until;
  run.stop();
  return summary(await run, (performance.now() - started) / 1000);
}

async function main() {
  if (!fs.existsSync(path.join(storeDir, 'graph', 'CURRENT')))
    throw new Error(`no embedded store in ${storeDir}: run bench/run.mjs first`);
  const vids = await firstValues('companies.csv', 'vid', 5000);
  const edges = await firstValues('relationships.csv', 'edge_id', 5000);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, serveArgs(), {
    env: {
      ...serveEnv(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: storeDir,
      STORE: 'embedded',
      API_KEYS: KEY,
      SEED_DEMO: 'false',
      LOG_LEVEL: args['log-level'] ?? 'warn',
      RATE_LIMIT_MAX: '10000000',
      READ_CACHE_ENTRIES: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await untilReady(base);
    const first = await settle(base, { maxS: settleS });
    log(`settled after ${first.seconds.toFixed(0)} s; reading ${phaseS} s before the import`);
    const before = await phase(base, vids, edges, sleep(phaseS * 1000));

    const tagBefore = await dataTag(base, vids[0]);
    log('importing the same dataset into the served DATA_DIR, reading meanwhile');
    const importStarted = performance.now();
    const importer = spawn(process.execPath, [CLI, 'import', dataset], {
      env: { ...process.env, DATA_DIR: storeDir, STORE: 'embedded', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let importErr = '';
    importer.stderr.on('data', (d) => (importErr = (importErr + d).slice(-2000)));
    const imported = new Promise((resolve) => importer.on('exit', (code) => resolve(code)));
    const during = await phase(base, vids, edges, imported);
    const importCode = await imported;
    const importSeconds = (performance.now() - importStarted) / 1000;
    if (importCode !== 0) throw new Error(`import exited with ${importCode}: ${importErr}`);

    log('import done; reading until the server has switched and built what it derives from the new data');
    const switched = (async () => {
      // The server looks at the generation file every 2 s and serves the old generation until it
      // has opened the new one, so /readyz shows nothing building until then: wait for the switch
      // (the data version in the ETag), then for what it derives.
      const started = performance.now();
      while ((await dataTag(base, vids[0])) === tagBefore) {
        if (performance.now() - started > settleS * 1000) throw new Error('the server did not switch');
        await sleep(250);
      }
      return settle(base, { maxS: settleS });
    })();
    const switching = await phase(base, vids, edges, switched);
    const after = await phase(base, vids, edges, sleep(phaseS * 1000));

    const result = { connections, importSeconds, phases: { before, during, switching, after } };
    const out = writeResults('reads-during-import', result);
    console.log(`import: ${importSeconds.toFixed(1)} s under reads`);
    console.log('| phase | seconds | req/s | p50 ms | p99 ms | max ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, p] of Object.entries(result.phases))
      console.log(
        `| ${name} | ${p.seconds} | ${p.rps} | ${p.p50} | ${p.p99} | ${p.max} | ${p.non2xx} | ${p.errors} |`,
      );
    console.log(`Results written to ${path.relative(ROOT, out)}`);
  } finally {
    server.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

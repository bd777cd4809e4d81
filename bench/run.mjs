// Benchmark harness: generates and imports a dataset once, starts the built server as a child process,
// loads it with autocannon and compares company search with PostgreSQL pg_trgm. bench/README.md describes
// the options, the cases and the targets. All traffic stays on 127.0.0.1.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import neo4j from 'neo4j-driver';
import pg from 'pg';
import {
  CLI,
  ROOT,
  eachCsvRow,
  freePort,
  peakRssBytes,
  rssBytes,
  serveArgs,
  serveEnv,
  settle,
  sleep,
  statCpu,
  SERVE_KEY,
} from './common.mjs';

const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const BENCH_KEY = SERVE_KEY;
const KEY_HEADER = 'X-SERVICE-KEY';

const SERVER_CASES = [
  'healthz',
  'search',
  'search_all',
  'suggest',
  'profile',
  'suppliers',
  'hub_lists',
  'hub_pages',
  'cluster_lists',
  'cluster_members',
  'edge',
  'paths',
];
const ALL_CASES = [...SERVER_CASES, 'pg_trgm'];

const SEARCH_TERMS = 2000;
/** Vids and edge ids the profile and edge cases read unless --keys says otherwise. */
const POINT_KEYS = 5000;
/** The cases that read those keys, whose order --keys and --skew set. */
const POINT_CASES = ['profile', 'edge'];
const TOP_COMPANIES = 100;
/** Pairs of companies 3 tiers apart for the paths case, found by walks over supplier lists. */
const PATH_PAIRS = 100;
const PATH_TIERS = 3;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const READY_TIMEOUT_MS = 5 * MINUTE;
const GENERATE_TIMEOUT_MS = 60 * MINUTE;
const IMPORT_TIMEOUT_MS = 120 * MINUTE;
const STOP_TIMEOUT_MS = 20 * SECOND;
const REQUEST_TIMEOUT_S = 10;
// Each response's latency is kept for exact percentiles; this bounds the memory it may take.
const MAX_LATENCY_SAMPLES = 20_000_000;

const PG_SEARCH_SQL =
  'SELECT vid, name, similarity(name, $1) AS sim FROM companies WHERE name % $1 ORDER BY sim DESC LIMIT 10';

const TARGETS = {
  search: { rps: 1000, p99: 50 },
  search_all: { rpsAtLeast: 'pg_trgm' },
  suggest: { p99: 20 },
  profile: { rps: 3000, p99: 20 },
  suppliers: { rps: 1500, p99: 40 },
  edge: { rps: 3000 },
  generateImportS: 300,
  generateImportCompanies: 1_000_000,
  // The issues say 3 GB: decimal, 3,000,000,000 bytes (2.79 GiB).
  rssBytes: 3_000_000_000,
};

// ---------------------------------------------------------------- options

function readOptions() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      companies: { type: 'string' },
      seed: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      runs: { type: 'string' },
      'data-dir': { type: 'string' },
      cases: { type: 'string' },
      'skip-pg': { type: 'boolean' },
      store: { type: 'string' },
      'neo4j-uri': { type: 'string' },
      'read-cache': { type: 'string' },
      'node-args': { type: 'string' },
      settle: { type: 'string' },
      'accept-encoding': { type: 'string' },
      'fresh-server': { type: 'boolean' },
      'neo4j-loaded': { type: 'boolean' },
      warmup: { type: 'string' },
      keys: { type: 'string' },
      skew: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'node bench/run.mjs [--companies N] [--seed S] [--duration SECONDS] [--connections N] [--runs N]\n' +
        `                   [--data-dir DIR] [--cases ${ALL_CASES.join(',')}] [--skip-pg]\n` +
        '                   [--store embedded|neo4j] [--neo4j-uri bolt://HOST:PORT] [--neo4j-loaded] [--read-cache ENTRIES]\n' +
        '                   [--node-args=--max-old-space-size=1536] [--settle SECONDS] [--accept-encoding "gzip, br"]\n' +
        '                   [--fresh-server] [--warmup SECONDS] [--keys N] [--skew S]\n' +
        'Each option can also be set as BENCH_<NAME> in the environment (BENCH_DATA_DIR, BENCH_SKIP_PG=1, ...).\n',
    );
    process.exit(0);
  }
  const raw = (name) => values[name] ?? process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
  const int = (name, def, min, max) => {
    const v = raw(name);
    if (v === undefined || v === '') return def;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max)
      fail(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  // Given as --name alone, or as BENCH_NAME=1, true or yes.
  const flag = (name) => {
    const v = raw(name);
    return v === true || ['1', 'true', 'yes'].includes(String(v ?? '').toLowerCase());
  };
  const cases = (raw('cases') ?? ALL_CASES.join(','))
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
  const unknown = cases.filter((c) => !ALL_CASES.includes(c));
  if (unknown.length > 0 || cases.length === 0)
    fail(`--cases takes a comma list of: ${ALL_CASES.join(', ')}`);
  const store = raw('store') ?? 'embedded';
  if (!['embedded', 'neo4j'].includes(store)) fail('--store takes embedded or neo4j');
  const neo4jUri = raw('neo4j-uri') ?? process.env.NEO4J_URI;
  if (store === 'neo4j' && !neo4jUri) fail('--store neo4j needs --neo4j-uri (or NEO4J_URI)');
  const neo4jLoaded = flag('neo4j-loaded');
  if (neo4jLoaded && store !== 'neo4j') fail('--neo4j-loaded goes with --store neo4j');
  const readCache = raw('read-cache');
  const acceptEncoding = raw('accept-encoding');
  return {
    store,
    // Sent with every request when set, as most HTTP clients do; unset, answers are never compressed.
    acceptEncoding: acceptEncoding === undefined || acceptEncoding === '' ? null : acceptEncoding,
    neo4jUri: store === 'neo4j' ? neo4jUri : null,
    // The server was loaded outside the bench (neo4j-admin's importer): use it, never import into it.
    neo4jLoaded,
    // Unset keeps the server's default cache; 0 turns it off, so reads reach the store.
    readCache: readCache === undefined || readCache === '' ? null : int('read-cache', 0, 0, 10_000_000),
    companies: int('companies', 1_000_000, 10, 50_000_000),
    seed: int('seed', 1, 0, 2 ** 31 - 1),
    duration: int('duration', 20, 1, 3600),
    connections: int('connections', 32, 1, 1024),
    runs: int('runs', 3, 1, 100),
    dataDir: path.resolve(raw('data-dir') ?? path.join(ROOT, 'bench', 'data')),
    cases: ALL_CASES.filter((c) => cases.includes(c)),
    // Flags for the server's Node process (a heap limit, say), space-separated.
    nodeArgs: (raw('node-args') ?? '').split(' ').filter((a) => a.length > 0),
    // The longest wait for what the server builds in the background after it is ready (list heads, walk
    // memory, point-read file: /readyz says), before the first case; 0 starts at once.
    settle: int('settle', 600, 0, 3600),
    skipPg: flag('skip-pg'),
    // A new server process for every run set: the same build runs at two speeds, drawn per process and
    // kept for its life (bench/README.md), so one process would decide every run of a median.
    freshServer: flag('fresh-server'),
    // Seconds of each case's requests sent before its measured ones, and not counted: a fresh process
    // optimises its code during its first seconds of a case, which the figures of a long-running
    // server do not pay.
    warmup: int('warmup', 0, 0, 600),
    // How many vids and edge ids the profile and edge cases read. More than a run's requests spread
    // the reads over the store as traffic over every company does, beyond what the read cache and the
    // page cache keep from earlier requests; each run set then starts at its own share of them.
    keys: int('keys', POINT_KEYS, 1, 50_000_000),
    // Zipf's exponent for the order in which profile and edge read their keys: 0 reads each in turn;
    // above 0 the n-th key of a run set's share is read in proportion to 1/n^S, so some repeat often
    // and most seldom, as readers of a few well-known companies and many others do.
    skew: skewOption(raw('skew')),
  };
}

/** --skew: a number from 0 to 4, given with up to two decimals. */
function skewOption(v) {
  if (v === undefined || v === '') return 0;
  const n = Number(v);
  if (!/^\d+(\.\d{1,2})?$/.test(String(v)) || n > 4) fail('--skew must be a number from 0 to 4');
  return n;
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

const log = (message) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---------------------------------------------------------------- small helpers

/** mulberry32: small, fast and the same on every platform, so a seed always picks the same inputs. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle(items, rand) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/**
 * Draws ranks 0..n-1 with probability in proportion to 1/(rank+1)^s (Zipf's law): the cumulative
 * weights once, then a binary search per draw.
 */
function zipfRanks(n, s, rand) {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cumulative[i] = sum += 1 / Math.pow(i + 1, s);
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Uniform sample of a stream of unknown length in one pass (algorithm R). */
class Reservoir {
  constructor(size, rand) {
    this.size = size;
    this.rand = rand;
    this.items = [];
    this.seen = 0;
  }
  offer(item) {
    this.seen++;
    if (this.items.length < this.size) this.items.push(item);
    else {
      const j = Math.floor(this.rand() * this.seen);
      if (j < this.size) this.items[j] = item;
    }
  }
}

function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

class LatencyRecorder {
  constructor() {
    this.values = new Float64Array(1 << 16);
    this.count = 0;
  }
  add(ms) {
    if (this.count >= MAX_LATENCY_SAMPLES) return;
    if (this.count === this.values.length) {
      const grown = new Float64Array(Math.min(this.values.length * 2, MAX_LATENCY_SAMPLES));
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }
  summary() {
    const sorted = this.values.slice(0, this.count).sort();
    return { samples: this.count, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
  }
}

/** CPU seconds the process has used (user and system, all its threads), from /proc; null elsewhere. */
function cpuSeconds(pid) {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of the process's main thread alone (its thread id is the process id): the thread that
 * takes every request, runs GraphQL and sends the answers, where search, list and walk work may run
 * on threads of their own beside it. Null where /proc is not there.
 */
function mainThreadCpuSeconds(pid) {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(file) {
  const cpu = statCpu(file);
  return cpu === null ? null : cpu.user + cpu.system;
}

const fmtInt = (n) => (n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US'));
const fmtMs = (n) => (n === null || n === undefined ? '-' : n.toFixed(2));
const fmtS = (n) => (n === null || n === undefined ? '-' : `${n.toFixed(1)} s`);
const fmtBytes = (n) => (n === null || n === undefined ? '-' : `${(n / 1024 ** 3).toFixed(2)} GiB`);
const fmtGB = (n) => (n === null || n === undefined ? '-' : `${(n / 1e9).toFixed(2)} GB`);

// ---------------------------------------------------------------- child processes and cleanup

/** Every child process, killed outright if the harness exits without stopping them. */
const children = new Set();
/** generate and import: stopped with SIGTERM on interrupt (the server has its own graceful stop). */
const commands = new Set();
const cleanups = [];
const pgSyncStops = [];
let cleaning = null;

/** Runs a command to completion with a time limit; stdout is captured and echoed, stderr passes through. */
function runCommand(cmd, args, { env, timeoutMs, echo = true }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    commands.add(child);
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s) => {
      stdout += s;
      if (echo) process.stderr.write(s);
    });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(
        new Error(
          `${[cmd, ...args].map((a) => path.basename(a)).join(' ')} took longer than ${timeoutMs / 1000} s`,
        ),
      );
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      children.delete(child);
      commands.delete(child);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      commands.delete(child);
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve({ stdout, seconds });
      else reject(new Error(`${[cmd, ...args].join(' ')} exited with ${signal ?? code}`));
    });
  });
}

function kill(set, signal) {
  for (const child of set) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

async function cleanup() {
  cleaning ??= (async () => {
    kill(commands, 'SIGTERM');
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (e) {
        log(`cleanup: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  })();
  return cleaning;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping the server and PostgreSQL`);
    currentCannon?.stop();
    // main() notices the interruption, cleans up and writes what it has; this only guards against a hang.
    setTimeout(() => process.exit(130), STOP_TIMEOUT_MS + 2 * MINUTE);
    void cleanup();
  });
}
// Last resort when the process ends without cleanup having finished: nothing may outlive the harness.
process.on('exit', () => {
  kill(children, 'SIGKILL');
  for (const fn of pgSyncStops.splice(0)) fn();
});

// ---------------------------------------------------------------- dataset

/** Beside the dataset while the bench generates it (and, on the embedded store, imports it). */
function generatingMarker(datasetDir) {
  return `${datasetDir}.generating`;
}

/**
 * A data directory that holds another dataset (another --companies or --seed) is refused, not
 * rebuilt: a 1M dataset and its store take minutes to make again, and a mistyped size must not
 * delete them.
 */
function refuseOtherDataset(opts, datasetDir) {
  const markers = fs.existsSync(datasetDir)
    ? fs.readdirSync(datasetDir).filter((f) => /^_GENERATED_\d+_\d+$/.test(f))
    : [];
  const other = markers.find((f) => f !== `_GENERATED_${opts.companies}_${opts.seed}`);
  if (other === undefined) {
    // Files without a marker are not the bench's (a dataset generated by the CLI alone, or data of
    // one's own), unless a generation of the bench was cut short there; they are not deleted.
    const held = fs.existsSync(datasetDir) ? fs.readdirSync(datasetDir) : [];
    if (markers.length === 0 && held.length > 0 && !fs.existsSync(generatingMarker(datasetDir)))
      fail(
        `${datasetDir} holds files (${held.slice(0, 3).join(', ')}${held.length > 3 ? ', ...' : ''}) that this bench did not generate: ` +
          `give another --data-dir, or delete ${datasetDir} to build the dataset there`,
      );
    return;
  }
  const [, companies, seed] = other.split('_').filter(Boolean);
  fail(
    `${opts.dataDir} holds the dataset of ${companies} companies, seed ${seed}, not ${opts.companies}, seed ${opts.seed}: ` +
      `give another --data-dir, or delete ${datasetDir} to build this one there`,
  );
}

async function ensureDataset(opts) {
  const datasetDir = path.join(opts.dataDir, 'dataset');
  const storeDir = path.join(opts.dataDir, 'store');
  const marker = path.join(datasetDir, `_GENERATED_${opts.companies}_${opts.seed}`);
  const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
  const storeEnv = { ...env, DATA_DIR: storeDir };
  const graphPresent = () => fs.existsSync(path.join(storeDir, 'graph'));

  if (opts.store === 'neo4j') return ensureNeo4jDataset(opts, datasetDir, marker, env);

  if (fs.existsSync(marker)) {
    const previous = JSON.parse(fs.readFileSync(marker, 'utf8') || '{}');
    if (graphPresent()) {
      log(`dataset ${opts.companies} companies, seed ${opts.seed}: reusing ${datasetDir} and ${storeDir}`);
      return { ...previous, reused: true, datasetDir };
    }
    log('dataset present but the store is missing: importing again');
    const imported = await importDataset(datasetDir, storeEnv);
    const record = { ...previous, ...imported, total_s: (previous.generate_s ?? 0) + imported.import_s };
    fs.writeFileSync(marker, JSON.stringify(record, null, 2));
    return { ...record, reused: false, datasetDir };
  }

  // Only the bench's own subdirectories are removed, never the data directory the user named.
  fs.rmSync(storeDir, { recursive: true, force: true });
  fs.mkdirSync(storeDir, { recursive: true });
  const generated = await generateDataset(opts, datasetDir, env);
  const imported = await importDataset(datasetDir, storeEnv);
  const record = { ...generated, ...imported, total_s: generated.generate_s + imported.import_s };
  // Written last: a dataset whose import failed or was interrupted is rebuilt on the next run.
  markDataset(marker, record);
  return { ...record, reused: false, datasetDir };
}

/**
 * Generates the dataset of --companies and --seed into `datasetDir`, in place of what a generation
 * cut short left there; marked as under way (generatingMarker) until markDataset. Answers what to
 * record of it.
 */
async function generateDataset(opts, datasetDir, env) {
  fs.writeFileSync(generatingMarker(datasetDir), '');
  fs.rmSync(datasetDir, { recursive: true, force: true });
  log(`generating ${opts.companies} companies (seed ${opts.seed}) into ${datasetDir}`);
  const gen = await runCommand(
    process.execPath,
    [
      CLI,
      'generate',
      '--companies',
      String(opts.companies),
      '--seed',
      String(opts.seed),
      '--out',
      datasetDir,
    ],
    { env, timeoutMs: GENERATE_TIMEOUT_MS },
  );
  return {
    companies: opts.companies,
    seed: opts.seed,
    built_at: new Date().toISOString(),
    generate_s: gen.seconds,
    generate_stdout: gen.stdout.trim(),
  };
}

/** Writes the dataset's marker (`marker`, in it) with `record`: the dataset is the bench's, and whole. */
function markDataset(marker, record) {
  fs.writeFileSync(marker, JSON.stringify(record, null, 2));
  fs.rmSync(generatingMarker(path.dirname(marker)), { force: true });
}

/**
 * Neo4j: the dataset is generated (or reused) as for the embedded store, then imported into the
 * server at --neo4j-uri. Which dataset that server holds is recorded in <data-dir>/store-neo4j,
 * keyed by its address, since the bench cannot tell from the database itself.
 */
async function ensureNeo4jDataset(opts, datasetDir, marker, env) {
  const storeDir = path.join(opts.dataDir, 'store-neo4j');
  const storeEnv = { ...env, ...neo4jEnv(opts), DATA_DIR: storeDir };
  const imported = path.join(storeDir, `_IMPORTED_${opts.companies}_${opts.seed}`);
  let previous = fs.existsSync(marker) ? JSON.parse(fs.readFileSync(marker, 'utf8') || '{}') : null;
  if (previous === null) {
    previous = await generateDataset(opts, datasetDir, env);
    markDataset(marker, previous);
  }
  if (fs.existsSync(imported)) {
    const record = JSON.parse(fs.readFileSync(imported, 'utf8'));
    // The record says what was imported, not what the server still holds (a server started on
    // an empty directory, or emptied by hand): its company count must agree before it is reused.
    const held = record.neo4j_uri === opts.neo4jUri ? await neo4jCompanies(opts) : null;
    if (held === opts.companies) {
      log(`dataset ${opts.companies} companies, seed ${opts.seed}: reusing the import into ${opts.neo4jUri}`);
      return { ...previous, ...record, reused: true, datasetDir };
    }
    if (held !== null)
      log(`${opts.neo4jUri} holds ${held} companies, not the ${opts.companies} recorded: importing again`);
  }
  if (opts.neo4jLoaded) {
    // Loaded by hand (see README, "Neo4j side by side, loaded by neo4j-admin"): the bench cannot tell
    // which dataset the server holds, only how many companies, so a count that differs is refused.
    const held = await neo4jCompanies(opts);
    if (held !== opts.companies)
      fail(
        `--neo4j-loaded: ${opts.neo4jUri} holds ${held} companies, not the ${opts.companies} of this dataset`,
      );
    fs.mkdirSync(storeDir, { recursive: true });
    const record = {
      loaded_by: 'outside the bench (--neo4j-loaded)',
      neo4j_uri: opts.neo4jUri,
      import_s: null,
    };
    fs.writeFileSync(imported, JSON.stringify(record, null, 2));
    log(
      `dataset ${opts.companies} companies, seed ${opts.seed}: ${opts.neo4jUri} holds them, loaded outside the bench`,
    );
    return { ...previous, ...record, reused: true, datasetDir };
  }
  fs.rmSync(storeDir, { recursive: true, force: true });
  fs.mkdirSync(storeDir, { recursive: true });
  const result = await importDataset(datasetDir, storeEnv);
  const record = {
    ...result,
    neo4j_uri: opts.neo4jUri,
    total_s: (previous.generate_s ?? 0) + result.import_s,
  };
  fs.writeFileSync(imported, JSON.stringify(record, null, 2));
  return { ...previous, ...record, reused: false, datasetDir };
}

/** The settings that point the CLI at Neo4j; the password only satisfies the configuration when auth is off. */
function neo4jEnv(opts) {
  return {
    STORE: 'neo4j',
    NEO4J_URI: opts.neo4jUri,
    NEO4J_USER: process.env.NEO4J_USER ?? 'neo4j',
    NEO4J_PASSWORD: process.env.NEO4J_PASSWORD ?? 'neo4j',
  };
}

/** How many companies the Neo4j server at --neo4j-uri holds. */
async function neo4jCompanies(opts) {
  const env = neo4jEnv(opts);
  const driver = neo4j.driver(env.NEO4J_URI, neo4j.auth.basic(env.NEO4J_USER, env.NEO4J_PASSWORD));
  try {
    const { records } = await driver.executeQuery(
      'MATCH (c:Company) RETURN count(c) AS n',
      {},
      {
        database: process.env.NEO4J_DATABASE ?? 'neo4j',
      },
    );
    return Number(records[0].get('n'));
  } finally {
    await driver.close();
  }
}

async function importDataset(datasetDir, env) {
  log(`importing ${datasetDir} into ${env.DATA_DIR}`);
  const r = await runCommand(process.execPath, [CLI, 'import', datasetDir], {
    env,
    timeoutMs: IMPORT_TIMEOUT_MS,
  });
  const m =
    /Imported ([\d,]+) rows? from \d+ files?(?: \([\d,]+ rejected\))? in [\d.]+ s \(([\d,]+) rows\/s/.exec(
      r.stdout,
    );
  const num = (s) => (s === undefined ? null : Number(s.replace(/,/g, '')));
  return {
    import_s: r.seconds,
    import_rows: num(m?.[1]),
    import_rows_per_s: num(m?.[2]),
    import_stdout: r.stdout.trim(),
  };
}

function typo(name, rand) {
  const positions = [];
  for (let i = 0; i < name.length; i++) if (/\p{L}/u.test(name[i])) positions.push(i);
  if (positions.length === 0) return name;
  const at = positions[Math.floor(rand() * positions.length)];
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let c = letters[Math.floor(rand() * letters.length)];
  if (c === name[at].toLowerCase()) c = letters[(letters.indexOf(c) + 1) % letters.length];
  return name.slice(0, at) + c + name.slice(at + 1);
}

function searchTerm(name, kind, rand) {
  const words = name.split(/\s+/).filter((w) => w.length > 0);
  switch (kind) {
    case 0:
      return name;
    case 1:
      return words[0] ?? name;
    case 2:
      return words.length >= 2 ? `${words[0]} ${words[1]}` : name;
    case 3:
      return name.slice(0, 4 + Math.floor(rand() * 3)).trim() || name;
    default:
      return typo(name, rand);
  }
}

/** Samples the inputs once per dataset; the result is cached beside the marker since the dataset never changes. */
async function sampleInputs(opts, datasetDir) {
  const cache = path.join(datasetDir, `_bench_inputs_v1_${opts.seed}.json`);
  if (fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8'));
  const started = performance.now();
  const rand = prng(opts.seed ^ 0x5eed);
  const names = new Reservoir(SEARCH_TERMS, rand);
  const { vids, edges } = await drawKeys(datasetDir, POINT_KEYS, rand, (name) => {
    if (name.trim().length > 0) names.offer(name.trim());
  });
  const terms = names.items.map((name, i) => searchTerm(name, i % 5, rand));
  const inputs = {
    companies_read: vids.seen,
    edges_read: edges.seen,
    search_terms: shuffle(terms, rand),
    vids: shuffle(vids.items, rand),
    edge_ids: shuffle(edges.items, rand),
  };
  fs.writeFileSync(cache, JSON.stringify(inputs));
  log(
    `sampled ${inputs.search_terms.length} terms, ${inputs.vids.length} vids, ${inputs.edge_ids.length} edges ` +
      `from ${vids.seen} companies and ${edges.seen} relationships in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return inputs;
}

/**
 * Uniform samples of `size` company vids and `size` edge ids from the dataset's files, in one pass over
 * each; `eachName` sees every company's name right after its vid is offered (the order in which
 * `rand` is drawn, so a seed always gives the same inputs).
 */
async function drawKeys(datasetDir, size, rand, eachName = () => {}) {
  const vids = new Reservoir(size, rand);
  const edges = new Reservoir(size, rand);
  await eachCsvRow(path.join(datasetDir, 'companies.csv'), [['vid'], ['name']], ([vid, name]) => {
    vids.offer(vid);
    eachName(name);
  });
  await eachCsvRow(path.join(datasetDir, 'relationships.csv'), [['edge_id', 'id']], ([id]) =>
    edges.offer(id),
  );
  return { vids, edges };
}

/**
 * The vids and edge ids of the profile and edge cases: the sampled inputs' own 5,000, or with --keys
 * another number of them, drawn with a PRNG of their own (so the search terms and the path pairs stay
 * those of every other run) and cached beside the inputs.
 */
async function pointKeys(opts, datasetDir, inputs) {
  if (opts.keys === POINT_KEYS) return { vids: inputs.vids, edge_ids: inputs.edge_ids };
  const cache = path.join(datasetDir, `_bench_keys_v1_${opts.seed}_${opts.keys}.json`);
  if (fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8'));
  const started = performance.now();
  const rand = prng(opts.seed ^ 0x6b657973);
  const { vids, edges } = await drawKeys(datasetDir, opts.keys, rand);
  const keys = { vids: shuffle(vids.items, rand), edge_ids: shuffle(edges.items, rand) };
  fs.writeFileSync(cache, JSON.stringify(keys));
  log(
    `sampled ${keys.vids.length} vids and ${keys.edge_ids.length} edge ids for --keys ` +
      `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return keys;
}

// ---------------------------------------------------------------- server

async function startServer(opts) {
  const port = await freePort();
  const env = {
    ...serveEnv(CLI),
    DATA_DIR: path.join(opts.dataDir, opts.store === 'neo4j' ? 'store-neo4j' : 'store'),
    ...(opts.store === 'neo4j' ? neo4jEnv(opts) : { STORE: 'embedded' }),
    ...(opts.readCache === null ? {} : { READ_CACHE_ENTRIES: String(opts.readCache) }),
    PORT: String(port),
    HOST: '127.0.0.1',
    API_KEYS: BENCH_KEY,
    API_KEY_HEADER: KEY_HEADER,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    // The configuration's ceiling; per 60 s window it is far beyond what one client machine can send.
    RATE_LIMIT_MAX: '10000000',
  };
  const started = performance.now();
  // Its own process group: a Ctrl-C in the terminal must not reach it besides the SIGTERM sent by cleanup,
  // since a second signal would cut its graceful shutdown short.
  const child = spawn(process.execPath, serveArgs(CLI, opts.nodeArgs), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(child);
  const tail = [];
  const keep = (s) => {
    for (const line of String(s).split('\n')) if (line.trim()) tail.push(line);
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = signal ?? code;
    children.delete(child);
  });
  const server = {
    child,
    port,
    base: `http://127.0.0.1:${port}`,
    tail,
    get exited() {
      return exited;
    },
  };
  cleanups.push(() => stopServer(server));

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (interrupted) throw new Error('interrupted');
    if (exited !== null)
      throw new Error(`server exited with ${exited} before it was ready:\n${tail.join('\n')}`);
    if (Date.now() > deadline)
      throw new Error(`server not ready after ${READY_TIMEOUT_MS / 1000} s:\n${tail.join('\n')}`);
    try {
      const res = await fetch(`${server.base}/readyz`, { signal: AbortSignal.timeout(2 * SECOND) });
      await res.arrayBuffer();
      // It listens before it is ready (a first search index is built behind a 503 from /readyz).
      server.listeningS ??= (performance.now() - started) / 1000;
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  server.readyS = (performance.now() - started) / 1000;
  server.rssAfterStart = noteRss(server);
  return server;
}

/**
 * The server's resident size now (null once it is gone), noted in its largest sample
 * (`server.rssMax`) and its peak as the kernel marks it (`server.rssPeak`, which holds what samples
 * miss).
 */
function noteRss(server) {
  const rss = rssBytes(server.child.pid);
  if (rss !== null) server.rssMax = Math.max(server.rssMax ?? 0, rss);
  server.rssPeak = peakRssBytes(server.child.pid, server.rssMax ?? null, server.rssPeak ?? null);
  return rss;
}

function stopServer(server) {
  server.stopping ??= (async () => {
    if (server.exited !== null) return;
    // The kernel's mark of the process goes with it.
    noteRss(server);
    const gone = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    const timer = setTimeout(() => server.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
  })();
  return server.stopping;
}

async function getJson(server, pathAndQuery) {
  const res = await fetch(server.base + pathAndQuery, {
    headers: { [KEY_HEADER]: BENCH_KEY },
    signal: AbortSignal.timeout(60 * SECOND),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${pathAndQuery}: ${res.status} ${body.slice(0, 300)}`);
  return JSON.parse(body);
}

// ---------------------------------------------------------------- load cases

let currentCannon = null;

/** The longer of a company's two lists: what makes it a hub. */
const longerList = (c) => (c.count_suppliers >= c.count_customers ? 'suppliers' : 'customers');

function casePaths(name, inputs, top, pairs) {
  const q = encodeURIComponent;
  switch (name) {
    case 'healthz':
      return ['/healthz'];
    case 'search':
      return inputs.search_terms.map((t) => `/v1/companies/?name=${q(t)}`);
    case 'search_all':
      return inputs.search_terms.map((t) => `/v1/companies/?name=${q(t)}&include_subsidiaries=true`);
    case 'suggest':
      // What a search box sends while the term is typed: its first 3 to 8 characters.
      return inputs.search_terms.map(
        (t, i) => `/v1/companies/suggest/?q=${q(t.slice(0, 3 + (i % 6)).trim() || t)}`,
      );
    case 'profile':
      return inputs.vids.map((v) => `/v1/companies/${q(v)}/`);
    case 'suppliers':
      return top.map((c) => `/v1/companies/${q(c.vid)}/suppliers/?limit=10`);
    case 'hub_lists':
      return top.map((c) => `/v1/companies/${q(c.vid)}/${longerList(c)}/?limit=10`);
    case 'hub_pages':
      // The same lists paged past their first 100 entries (which the server keeps) and filtered by
      // confidence, as an analyst reads on through a hub's suppliers: each page is ordered from the
      // whole list.
      return top.flatMap((c, i) => {
        const list = `/v1/companies/${q(c.vid)}/${longerList(c)}/`;
        return [`${list}?limit=10&offset=${100 + 10 * (i % 10)}`, `${list}?limit=10&confidence_score=0.5`];
      });
    case 'cluster_lists':
      // The same lists grouped by cluster, as an analyst asks for a group's suppliers or customers.
      return top.map((c) => `/v1/companies/${q(c.vid)}/cluster_${longerList(c)}/?limit=10`);
    case 'cluster_members':
      // The cluster of each of the same companies: its parent and first page of members.
      return top.map((c) => `/v1/clusters/${q(c.cid_id)}?limit=10`);
    case 'edge':
      return inputs.edge_ids.map((e) => `/v1/edges/${q(e)}/`);
    case 'paths':
      return pairs.map(([from, to]) => `/v1/paths/?from=${q(from)}&to=${q(to)}&max_tiers=${PATH_TIERS}`);
    default:
      throw new Error(`no paths for ${name}`);
  }
}

/**
 * Pairs (customer, supplier) whose shortest supplier chain has exactly PATH_TIERS hops: a random
 * walk up supplier lists from sampled companies, kept when the service's own shortest chain is
 * that long (a walk can come back near its start).
 */
async function pathPairs(server, vids, seed) {
  const rand = prng(seed ^ 0x9a7b5);
  const q = encodeURIComponent;
  const pairs = [];
  const started = performance.now();
  for (const start of vids) {
    if (pairs.length >= PATH_PAIRS || interrupted) break;
    let at = start;
    for (let hop = 0; hop < PATH_TIERS && at !== null; hop++) {
      const page = await getJson(server, `/v1/companies/${q(at)}/suppliers/?limit=50`);
      const next = page.results.map((r) => r.supplier?.vid ?? r.vid).filter((v) => typeof v === 'string');
      at = next.length > 0 ? next[Math.floor(rand() * next.length)] : null;
    }
    if (at === null || at === start) continue;
    const found = await getJson(
      server,
      `/v1/paths/?from=${q(start)}&to=${q(at)}&max_tiers=${PATH_TIERS}&limit=1`,
    );
    if (found.results[0]?.length === PATH_TIERS) pairs.push([start, at]);
  }
  log(
    `found ${pairs.length} pairs ${PATH_TIERS} tiers apart in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return pairs;
}

/** Starts a server and waits, within --settle, until it builds nothing in the background. */
async function bootServer(opts) {
  log('starting the server');
  const server = await startServer(opts);
  log(
    `server listening in ${server.listeningS.toFixed(1)} s, ready on ${server.base} in ${server.readyS.toFixed(1)} s, RSS ${fmtBytes(server.rssAfterStart)}`,
  );
  let settledAs = null;
  if (opts.settle > 0) {
    log(`waiting until the server builds nothing in the background, at most ${opts.settle} s (--settle)`);
    // The server's peak memory may come while it builds (the first start on Neo4j reads everything).
    const settled = await settle(server.base, {
      maxS: opts.settle,
      onPoll: () => noteRss(server),
    });
    log(`settled after ${settled.seconds.toFixed(0)} s: ${JSON.stringify(settled.derived)}`);
    settledAs = settled;
  }
  return { server, settledAs };
}

/** One request per path before the load, so a broken case is reported with the server's answer. */
async function preflight(server, name, paths) {
  const res = await fetch(server.base + paths[0], {
    headers: { [KEY_HEADER]: BENCH_KEY },
    signal: AbortSignal.timeout(60 * SECOND),
  });
  const body = await res.text();
  if (res.status < 200 || res.status > 299)
    log(`WARNING ${name}: GET ${paths[0]} -> ${res.status} ${body.slice(0, 300)}`);
}

async function runCannon(server, paths, opts, start = 0, skew = 0) {
  // The measured requests go on where the warm-up's stopped in the list of paths.
  let next = start;
  const rank = skew > 0 ? zipfRanks(paths.length, skew, prng(start ^ 0x7a697066)) : null;
  const cannon = (duration) =>
    autocannon({
      url: server.base,
      connections: opts.connections,
      duration,
      timeout: REQUEST_TIMEOUT_S,
      headers: {
        [KEY_HEADER]: BENCH_KEY,
        ...(opts.acceptEncoding === null ? {} : { 'accept-encoding': opts.acceptEncoding }),
      },
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => {
            req.path = paths[rank === null ? next++ % paths.length : (start + rank()) % paths.length];
            return req;
          },
        },
      ],
    });
  if (opts.warmup > 0) {
    const warm = cannon(opts.warmup);
    currentCannon = warm;
    await warm;
    currentCannon = null;
    if (interrupted) throw new Error('interrupted');
  }
  const latencies = new LatencyRecorder();
  // The largest RSS seen during this case, and over the server's life (server.rssMax).
  let caseRssMax = null;
  const sampleRss = () => {
    const rss = noteRss(server);
    if (rss !== null) caseRssMax = Math.max(caseRssMax ?? 0, rss);
    return rss;
  };
  const rssTimer = setInterval(sampleRss, 500);
  const cpuBefore = cpuSeconds(server.child.pid);
  const mainBefore = mainThreadCpuSeconds(server.child.pid);
  try {
    const instance = cannon(opts.duration);
    currentCannon = instance;
    instance.on('response', (_client, _status, _bytes, ms) => latencies.add(ms));
    const r = await instance;
    const cpuAfter = cpuSeconds(server.child.pid);
    const mainAfter = mainThreadCpuSeconds(server.child.pid);
    const lat = latencies.summary();
    const rss = sampleRss();
    if (server.exited !== null)
      throw new Error(`server exited with ${server.exited}:\n${server.tail.join('\n')}`);
    return {
      rps: r.requests.average,
      requests: r.requests.total,
      // The server's own work per answer: steadier than req/s when the load generator shares the cores.
      server_cpu_us_per_request:
        cpuBefore !== null && cpuAfter !== null && r.requests.total > 0
          ? ((cpuAfter - cpuBefore) * 1e6) / r.requests.total
          : null,
      // Of it, the main thread's; the rest is search threads, V8's collector threads, the engine's.
      server_main_thread_cpu_us_per_request:
        mainBefore !== null && mainAfter !== null && r.requests.total > 0
          ? ((mainAfter - mainBefore) * 1e6) / r.requests.total
          : null,
      p50: lat.p50,
      p99: lat.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      status_codes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])),
      autocannon_latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
      rss_bytes: rss,
      rss_max_bytes: caseRssMax,
      duration_s: r.duration,
    };
  } finally {
    clearInterval(rssTimer);
    currentCannon = null;
  }
}

// ---------------------------------------------------------------- PostgreSQL

function findPostgres() {
  const base = '/usr/lib/postgresql';
  let versions;
  try {
    versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')));
  } catch {
    return null;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? { version: versions[0], bin: path.join(base, versions[0], 'bin') } : null;
}

async function startPostgres(pgInfo, opts) {
  const asRoot = process.getuid?.() === 0;
  const asPg = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  const run = (cmd, args, timeoutMs) => {
    const [c, a] = asPg(path.join(pgInfo.bin, cmd), args);
    const r = spawnSync(c, a, { encoding: 'utf8', timeout: timeoutMs });
    if (r.status !== 0)
      throw new Error(`${cmd} failed (${r.error?.message ?? r.signal ?? r.status}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  };

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-bench-pg-'));
  const dataDir = path.join(tmp, 'data');
  const pgState = { tmp, dataDir, started: false };
  const stopSync = () => {
    if (pgState.started) {
      const [c, a] = asPg(path.join(pgInfo.bin, 'pg_ctl'), [
        '-D',
        dataDir,
        '-m',
        'fast',
        '-w',
        '-t',
        '60',
        'stop',
      ]);
      const r = spawnSync(c, a, { encoding: 'utf8', timeout: 90 * SECOND });
      if (r.status !== 0) killPostmaster(dataDir);
      pgState.started = false;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  pgSyncStops.push(stopSync);
  cleanups.push(async () => {
    stopSync();
    const i = pgSyncStops.indexOf(stopSync);
    if (i >= 0) pgSyncStops.splice(i, 1);
  });

  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    if (!Number.isInteger(uid) || !Number.isInteger(gid))
      throw new Error('no postgres OS user to run PostgreSQL as');
    fs.chownSync(tmp, uid, gid);
  }

  let locale = 'C.UTF-8';
  try {
    run(
      'initdb',
      ['-D', dataDir, '-E', 'UTF8', `--locale=${locale}`, '-U', 'postgres', '--auth=trust'],
      2 * MINUTE,
    );
  } catch (e) {
    // pg_trgm's notion of a letter follows the locale, so results under plain C differ for non-ASCII names.
    log(`initdb with C.UTF-8 failed, falling back to locale C: ${e.message.split('\n')[0]}`);
    fs.rmSync(dataDir, { recursive: true, force: true });
    locale = 'C';
    run(
      'initdb',
      ['-D', dataDir, '-E', 'UTF8', `--locale=${locale}`, '-U', 'postgres', '--auth=trust'],
      2 * MINUTE,
    );
  }

  const mem = os.totalmem();
  const mb = (bytes) => `${Math.max(32, Math.floor(bytes / 1024 ** 2))}MB`;
  const settings = {
    listen_addresses: '127.0.0.1',
    port: String(await freePort()),
    unix_socket_directories: tmp,
    max_connections: String(Math.max(100, opts.connections + 20)),
    shared_buffers: mb(Math.min(1024 ** 3, mem / 4)),
    effective_cache_size: mb(mem / 2),
    maintenance_work_mem: mb(Math.min(1024 ** 3, mem / 8)),
    work_mem: '32MB',
    // A throw-away cluster: durability costs time and proves nothing here.
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_wal_size: '4GB',
    autovacuum: 'off',
    // JIT compilation only slows down short index lookups like this one.
    jit: 'off',
  };
  const pgOpts = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  pgState.started = true;
  run(
    'pg_ctl',
    ['-D', dataDir, '-l', path.join(tmp, 'postgres.log'), '-o', pgOpts, '-w', '-t', '120', 'start'],
    3 * MINUTE,
  );
  return { ...pgState, port: Number(settings.port), settings, locale, version: pgInfo.version };
}

function killPostmaster(dataDir) {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGQUIT');
  } catch {
    // already gone
  }
}

function pgClient(pgServer) {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: pgServer.port,
    user: 'postgres',
    database: 'postgres',
    statement_timeout: 10 * MINUTE,
    connectionTimeoutMillis: 30 * SECOND,
  });
  // An idle client whose server goes away (stopped on interrupt) emits 'error'; the query in flight, if any,
  // fails and is counted, so this only keeps the process alive.
  client.on('error', () => {});
  return client;
}

async function loadPostgres(pgServer, datasetDir) {
  const csvFile = path.join(pgServer.tmp, 'companies.csv');
  const out = fs.createWriteStream(csvFile, { mode: 0o644 });
  const quote = (s) => `"${s.replace(/"/g, '""')}"`;
  let rows = 0;
  let pending = [];
  const flush = async () => {
    const chunk = pending.join('');
    pending = [];
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  };
  await eachCsvRow(path.join(datasetDir, 'companies.csv'), [['vid'], ['name']], ([vid, name]) => {
    pending.push(`${quote(vid)},${quote(name)}\n`);
    rows++;
    // Written in batches: a promise per row would dominate the time of the pass.
    return pending.length >= 10_000 ? flush() : undefined;
  });
  await flush();
  await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
  fs.chmodSync(csvFile, 0o644);

  const client = pgClient(pgServer);
  await client.connect();
  const timings = {};
  const timed = async (label, sql) => {
    const t = performance.now();
    await client.query(sql);
    timings[label] = (performance.now() - t) / 1000;
  };
  try {
    await timed('extension_s', 'CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await timed('create_s', 'CREATE TABLE companies (vid text, name text)');
    await timed(
      'copy_s',
      `COPY companies (vid, name) FROM '${csvFile.replace(/'/g, "''")}' WITH (FORMAT csv)`,
    );
    await timed('index_s', 'CREATE INDEX companies_name_trgm ON companies USING gin (name gin_trgm_ops)');
    await timed('analyze_s', 'ANALYZE companies');
    const threshold = await client.query('SHOW pg_trgm.similarity_threshold');
    const server = await client.query('SHOW server_version');
    fs.rmSync(csvFile, { force: true });
    return {
      rows,
      ...timings,
      similarity_threshold: threshold.rows[0]['pg_trgm.similarity_threshold'],
      server_version: server.rows[0].server_version,
    };
  } finally {
    await client.end();
  }
}

async function runPgSearch(pgServer, terms, opts) {
  const clients = Array.from({ length: opts.connections }, () => pgClient(pgServer));
  await Promise.all(clients.map((c) => c.connect()));
  const latencies = new LatencyRecorder();
  let next = 0;
  let errors = 0;
  let firstError = null;
  const started = performance.now();
  const deadline = started + opts.duration * SECOND;
  try {
    await Promise.all(
      clients.map(async (client) => {
        // Bounded by the deadline, and by the error count so a dead server does not spin for the whole duration.
        while (performance.now() < deadline && errors < 1000 && !interrupted) {
          const t = process.hrtime.bigint();
          try {
            await client.query({
              name: 'trgm_search',
              text: PG_SEARCH_SQL,
              values: [terms[next++ % terms.length]],
            });
            latencies.add(Number(process.hrtime.bigint() - t) / 1e6);
          } catch (e) {
            errors++;
            firstError ??= e instanceof Error ? e.message : String(e);
          }
        }
      }),
    );
  } finally {
    await Promise.allSettled(clients.map((c) => c.end()));
  }
  const elapsed = (performance.now() - started) / 1000;
  const lat = latencies.summary();
  return {
    rps: lat.samples / elapsed,
    requests: lat.samples,
    p50: lat.p50,
    p99: lat.p99,
    non2xx: 0,
    errors,
    timeouts: 0,
    first_error: firstError,
    duration_s: elapsed,
  };
}

// ---------------------------------------------------------------- report

function summarise(runs) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    ratio: median(runs.map((r) => r.ratio_to_healthz)),
    cpu_us: median(runs.map((r) => r.server_cpu_us_per_request ?? null)),
    main_cpu_us: median(runs.map((r) => r.server_main_thread_cpu_us_per_request ?? null)),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors + r.timeouts, 0),
  };
}

function targetVerdict(name, m, cases) {
  const t = TARGETS[name];
  if (!t || m.rps === null) return '';
  const parts = [];
  if (t.rps !== undefined) parts.push(`>= ${fmtInt(t.rps)} req/s ${m.rps >= t.rps ? 'ok' : 'MISSED'}`);
  if (t.p99 !== undefined)
    parts.push(`p99 <= ${t.p99} ms ${m.p99 !== null && m.p99 <= t.p99 ? 'ok' : 'MISSED'}`);
  if (t.rpsAtLeast !== undefined) {
    const other = cases[t.rpsAtLeast]?.median.rps;
    parts.push(
      other == null
        ? `vs ${t.rpsAtLeast}: not run`
        : `>= ${t.rpsAtLeast} req/s ${m.rps >= other ? 'ok' : 'MISSED'}`,
    );
  }
  return parts.join(', ');
}

function report(results) {
  const lines = [];
  const { machine, dataset, server, cases, pg: pgResult } = results;
  // What the server ran with; results of a run before serveNodeArgs was recorded have --node-args only.
  const nodeArgs = results.options.serveNodeArgs ?? results.options.nodeArgs;
  lines.push(
    '',
    `Machine: ${machine.cpu_model} x ${machine.cpus}, ${fmtBytes(machine.total_memory_bytes)} RAM, Node ${machine.node}, ${machine.platform}`,
    `Options: ${results.options.companies.toLocaleString('en-US')} companies, seed ${results.options.seed}, ` +
      `${results.options.duration} s x ${results.options.runs} run(s) per case` +
      (results.options.warmup > 0 ? ` after ${results.options.warmup} s of warm-up` : '') +
      `, ${results.options.connections} connections, ` +
      `store ${results.options.store}${results.options.neo4jUri ? ` (${results.options.neo4jUri})` : ''}, ` +
      `read cache ${results.options.readCache ?? 'server default'}` +
      (results.options.acceptEncoding ? `, Accept-Encoding: ${results.options.acceptEncoding}` : '') +
      (results.options.keys === POINT_KEYS
        ? ''
        : `, ${results.options.keys.toLocaleString('en-US')} vids and edge ids`) +
      (results.options.skew > 0 ? `, keys read with Zipf's exponent ${results.options.skew}` : '') +
      (nodeArgs.length > 0 ? `, node ${nodeArgs.join(' ')}` : ''),
    '',
    '| case | req/s (median) | p50 ms | p99 ms | ratio to healthz | server CPU µs/request | of it, main thread | non-2xx / errors | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const name of ALL_CASES) {
    const c = cases[name];
    if (!c) continue;
    const m = c.median;
    lines.push(
      `| ${name} | ${fmtInt(m.rps)} | ${fmtMs(m.p50)} | ${fmtMs(m.p99)} | ${m.ratio === null ? '-' : m.ratio.toFixed(3)} | ` +
        `${m.cpu_us === null || m.cpu_us === undefined ? '-' : m.cpu_us.toFixed(0)} | ` +
        `${m.main_cpu_us === null || m.main_cpu_us === undefined ? '-' : m.main_cpu_us.toFixed(0)} | ` +
        `${m.non2xx} / ${m.errors} | ${targetVerdict(name, m, cases)} |`,
    );
  }
  lines.push('');
  if (dataset) {
    const total = dataset.total_s ?? null;
    const scope = dataset.companies === TARGETS.generateImportCompanies;
    lines.push(
      `Dataset${dataset.reused ? ' (built by an earlier run)' : ''}: generate ${fmtS(dataset.generate_s)}, ` +
        `import ${fmtS(dataset.import_s)} (${fmtInt(dataset.import_rows)} rows, ${fmtInt(dataset.import_rows_per_s)} rows/s), ` +
        `total ${fmtS(total)}` +
        (scope && total !== null
          ? ` (target <= ${TARGETS.generateImportS} s: ${total <= TARGETS.generateImportS ? 'ok' : 'MISSED'})`
          : ''),
    );
  }
  if (server) {
    // The kernel's mark where there is one (results of earlier builds have only the samples).
    const judged = server.rss_peak_bytes ?? server.rss_max_bytes;
    lines.push(
      `Server: listening in ${fmtS(server.listening_s)}, ready in ${fmtS(server.ready_s)}, RSS after start ${fmtBytes(server.rss_after_start_bytes)}, ` +
        `max ${fmtBytes(server.rss_max_bytes)} sampled, peak ${fmtBytes(judged)} (${fmtGB(judged)}; target <= ${fmtGB(TARGETS.rssBytes)}: ` +
        `${judged !== null && judged <= TARGETS.rssBytes ? 'ok' : 'MISSED'})` +
        (server.processes > 1 ? `; a new server process for each of the ${server.processes} run sets` : ''),
    );
  }
  if (pgResult?.skipped) lines.push(`PostgreSQL: skipped (${pgResult.skipped})`);
  else if (pgResult?.load) {
    const l = pgResult.load;
    lines.push(
      `PostgreSQL ${l.server_version} (locale ${pgResult.locale}, shared_buffers ${pgResult.settings.shared_buffers}): ` +
        `${fmtInt(l.rows)} rows, COPY ${fmtS(l.copy_s)}, GIN index ${fmtS(l.index_s)}, threshold ${l.similarity_threshold}`,
    );
  }
  if (results.error) lines.push('', `FAILED: ${results.error}`);
  return lines.join('\n') + '\n';
}

function writeResults(results) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${results.started_at.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  return file;
}

// ---------------------------------------------------------------- main

async function main() {
  const opts = readOptions();
  refuseOtherDataset(opts, path.join(opts.dataDir, 'dataset'));
  const cpus = os.cpus();
  const results = {
    started_at: new Date().toISOString(),
    machine: {
      cpu_model: cpus[0]?.model?.trim() ?? 'unknown',
      cpus: cpus.length,
      total_memory_bytes: os.totalmem(),
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    },
    // What the server was started with: the flags npm start gives it, then --node-args.
    // ... and the C library's arenas it had (serveEnv): the image's 2 unless this process set another.
    options: {
      ...opts,
      serveNodeArgs: serveArgs(CLI, opts.nodeArgs).slice(0, -2),
      serveMallocArenaMax: serveEnv(CLI).MALLOC_ARENA_MAX ?? null,
    },
    targets: TARGETS,
    dataset: null,
    inputs: null,
    server: null,
    cases: {},
    pg: null,
    error: null,
  };
  let exitCode = 0;
  try {
    if (!fs.existsSync(CLI))
      throw new Error(`${CLI} not found: run npm run build first (npm run bench does)`);
    fs.mkdirSync(opts.dataDir, { recursive: true });

    const dataset = await ensureDataset(opts);
    results.dataset = { ...dataset };
    delete results.dataset.datasetDir;
    const inputs = await sampleInputs(opts, dataset.datasetDir);
    if (inputs.search_terms.length === 0 || inputs.vids.length === 0 || inputs.edge_ids.length === 0) {
      throw new Error(`the dataset in ${dataset.datasetDir} has no companies or no relationships`);
    }
    const keys = await pointKeys(opts, dataset.datasetDir, inputs);
    results.inputs = {
      companies_read: inputs.companies_read,
      edges_read: inputs.edges_read,
      search_terms: inputs.search_terms.length,
      vids: keys.vids.length,
      edge_ids: keys.edge_ids.length,
      search_term_examples: inputs.search_terms.slice(0, 10),
    };

    const serverCases = opts.cases.filter((c) => SERVER_CASES.includes(c));
    if (serverCases.length > 0) {
      const first = await bootServer(opts);
      let server = first.server;
      let rssMax = 0;
      let rssPeak = 0;
      let processes = 1;
      let top = [];
      if (
        ['suppliers', 'hub_lists', 'hub_pages', 'cluster_lists', 'cluster_members'].some((c) =>
          serverCases.includes(c),
        )
      ) {
        const page = await getJson(server, `/v1/companies/?limit=${TOP_COMPANIES}&include_subsidiaries=true`);
        top = page.results;
        if (top.length === 0) throw new Error('the top-companies list is empty');
        results.inputs.top_companies = top.length;
      }
      let pairs = [];
      if (serverCases.includes('paths')) {
        pairs = await pathPairs(server, inputs.vids, opts.seed);
        if (pairs.length === 0) throw new Error('no pair of companies 3 tiers apart was found');
        results.inputs.path_pairs = pairs.length;
      }
      const paths = Object.fromEntries(
        serverCases.map((c) => [c, casePaths(c, { ...inputs, ...keys }, top, pairs)]),
      );
      for (const c of serverCases) await preflight(server, c, paths[c]);

      // Runs are the outer loop so every run set sees the server in the same state, and ratios compare like with like.
      for (let run = 1; run <= opts.runs && !interrupted; run++) {
        if (run > 1 && opts.freshServer) {
          rssMax = Math.max(rssMax, server.rssMax ?? 0);
          await stopServer(server);
          rssPeak = Math.max(rssPeak, server.rssPeak ?? 0);
          ({ server } = await bootServer(opts));
          processes++;
          for (const c of serverCases) await preflight(server, c, paths[c]);
        }
        const set = {};
        for (const c of serverCases) {
          if (interrupted) break;
          log(`run ${run}/${opts.runs}: ${c} (${paths[c].length} paths, ${opts.duration} s)`);
          // Each run set starts at its own share of the keys (see --keys); the other cases' paths are
          // read from their start in every run.
          set[c] = POINT_CASES.includes(c)
            ? await runCannon(
                server,
                paths[c],
                opts,
                Math.floor(((run - 1) * paths[c].length) / opts.runs),
                opts.skew,
              )
            : await runCannon(server, paths[c], opts);
          log(
            `  ${fmtInt(set[c].rps)} req/s, p50 ${fmtMs(set[c].p50)} ms, p99 ${fmtMs(set[c].p99)} ms, ` +
              `non-2xx ${set[c].non2xx}, errors ${set[c].errors + set[c].timeouts}`,
          );
        }
        for (const c of Object.keys(set)) {
          set[c].ratio_to_healthz = set.healthz ? set[c].rps / set.healthz.rps : null;
          (results.cases[c] ??= { runs: [] }).runs.push(set[c]);
        }
      }
      for (const c of Object.keys(results.cases)) results.cases[c].median = summarise(results.cases[c].runs);
      // Stopped before PostgreSQL starts, so neither competes with the other for memory.
      await stopServer(server);
      rssPeak = Math.max(rssPeak, server.rssPeak ?? 0);
      // Start-up as the first process saw it (later ones start on what it saved); memory at most in any:
      // sampled every half second, and as the kernel marked it (VmHWM), which holds what samples miss.
      results.server = {
        listening_s: first.server.listeningS,
        ready_s: first.server.readyS,
        ...(first.settledAs ? { settled_s: first.settledAs.seconds, derived: first.settledAs.derived } : {}),
        rss_after_start_bytes: first.server.rssAfterStart,
        rss_max_bytes: Math.max(rssMax, server.rssMax ?? 0),
        rss_peak_bytes: rssPeak > 0 ? rssPeak : null,
        processes,
      };
    }

    if (opts.cases.includes('pg_trgm') && !interrupted) {
      const pgInfo = findPostgres();
      if (opts.skipPg) results.pg = { skipped: '--skip-pg' };
      else if (!pgInfo) results.pg = { skipped: 'no /usr/lib/postgresql/*/bin/initdb' };
      else {
        log(`starting PostgreSQL ${pgInfo.version} in a temporary cluster`);
        const pgServer = await startPostgres(pgInfo, opts);
        results.pg = { version: pgInfo.version, locale: pgServer.locale, settings: pgServer.settings };
        log('loading vid, name of every company and building the trigram index');
        results.pg.load = await loadPostgres(pgServer, dataset.datasetDir);
        log(
          `PostgreSQL loaded ${fmtInt(results.pg.load.rows)} rows: COPY ${fmtS(results.pg.load.copy_s)}, ` +
            `index ${fmtS(results.pg.load.index_s)}`,
        );
        const healthz = results.cases.healthz?.runs ?? [];
        const runs = [];
        for (let run = 1; run <= opts.runs && !interrupted; run++) {
          log(`run ${run}/${opts.runs}: pg_trgm (${inputs.search_terms.length} terms, ${opts.duration} s)`);
          const r = await runPgSearch(pgServer, inputs.search_terms, opts);
          r.ratio_to_healthz = healthz[run - 1] ? r.rps / healthz[run - 1].rps : null;
          log(
            `  ${fmtInt(r.rps)} queries/s, p50 ${fmtMs(r.p50)} ms, p99 ${fmtMs(r.p99)} ms, errors ${r.errors}`,
          );
          if (r.first_error) log(`  first error: ${r.first_error}`);
          runs.push(r);
        }
        results.cases.pg_trgm = { runs, median: summarise(runs) };
      }
    }

    for (const [name, c] of Object.entries(results.cases)) {
      if (c.median.non2xx > 0 || c.median.errors > 0) {
        exitCode = 1;
        log(`WARNING ${name}: ${c.median.non2xx} non-2xx responses and ${c.median.errors} errors/timeouts`);
        for (const r of c.runs) if (r.status_codes) log(`  status codes: ${JSON.stringify(r.status_codes)}`);
      }
    }
    if (interrupted) throw new Error('interrupted');
  } catch (e) {
    results.error = interrupted ? 'interrupted' : e instanceof Error ? e.message : String(e);
    exitCode = interrupted ? 130 : 1;
  } finally {
    await cleanup();
  }
  process.stdout.write(report(results));
  process.stdout.write(`Results written to ${path.relative(ROOT, writeResults(results))}\n`);
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);

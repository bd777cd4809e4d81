// What the benchmark scripts share: where the repository and the built CLI are,
// their `--name value` arguments, the median, a free loopback port, a pause, a process's RSS and CPU time from /proc, what else the machine did, a
// server started and watched until it has derived everything, profile reads alongside a batch of exports, the saved search index of a data dir (and loading it with this
// build), a CSV file's rows by column name, writing results.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseCsv } from 'csv-parse';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

/**
 * Node's arguments for `tiergraph serve` from the built CLI `cli`, with the flags `npm start` and the
 * image give the server (SERVE_NODE_FLAGS in src/heap-settings.ts), so that what is measured is
 * what is run; `extra` comes after them and so wins.
 */
export function serveArgs(cli = CLI, extra = []) {
  // A build from before the flags were named has none.
  return [...(heapSettings(cli).SERVE_NODE_FLAGS ?? []), ...extra, cli, 'serve'];
}

/** The build's src/heap-settings.ts (beside the CLI `cli`): what the server is started with. */
function heapSettings(cli) {
  return createRequire(import.meta.url)(path.join(path.dirname(cli), '..', 'heap-settings.js'));
}

/**
 * The environment for `tiergraph serve` from the built CLI `cli`: this process's, over the one the
 * image serves with (SERVE_ENV in src/heap-settings.ts, `MALLOC_ARENA_MAX=2`), so that what is
 * measured is what the image runs. A variable set here wins: `MALLOC_ARENA_MAX=64 node bench/...`
 * measures the C library's own number of arenas (8 a core) on up to 8 cores.
 */
export function serveEnv(cli = CLI) {
  // A build from before the environment was named has none.
  return { ...(heapSettings(cli).SERVE_ENV ?? {}), ...process.env };
}

/** `--name value` pairs of the command line, by name (values are strings). */
export function parseArgs(argv = process.argv.slice(2)) {
  return Object.fromEntries(
    argv
      .join(' ')
      .split('--')
      .filter(Boolean)
      .map((a) => a.trim().split(/\s+/)),
  );
}

/** The lower median of a list of numbers. */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** A TCP port free on 127.0.0.1 just now, for a server the benchmark starts. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The resident size (`VmRSS`) of process `pid` in bytes, or with `peak` its largest so far (`VmHWM`),
 * from /proc; null where it cannot be read.
 */
export function rssBytes(pid, peak = false) {
  const field = peak ? 'VmHWM' : 'VmRSS';
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readProc(`/proc/${pid}/status`) ?? '');
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * The largest resident size process `pid` has had, in bytes: the kernel's high-water mark
 * (`VmHWM`), which holds a peak that came and went between two samples, never less than `before`
 * (what an earlier call answered) nor `sampled` (the largest `VmRSS` seen). Null when none is
 * known. Read it before the process ends: the mark goes with it.
 */
export function peakRssBytes(pid, sampled = null, before = null) {
  const known = [rssBytes(pid, true), sampled, before].filter((v) => v !== null && v !== undefined);
  return known.length > 0 ? Math.max(...known) : null;
}

/** A file of /proc as text; null where it cannot be read (not Linux, or the process has ended). */
function readProc(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Clock ticks a second, the unit of /proc's CPU times (USER_HZ). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * The fields of a /proc stat file (`/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`) after the
 * command name, whose parentheses may hold spaces: element 0 is field 3 of proc(5), the state.
 * Null where it cannot be read.
 */
export function statFields(file) {
  const text = readProc(file);
  return text === null ? null : text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * The CPU seconds, user and system, in a /proc stat file: a process's (`/proc/<pid>/stat`, all its
 * threads) or one thread's (`/proc/<pid>/task/<tid>/stat`); null where it cannot be read.
 */
export function statCpu(file) {
  const fields = statFields(file);
  // utime and stime, fields 14 and 15.
  return fields === null
    ? null
    : { user: Number(fields[14 - 3]) / CLOCK_TICKS, system: Number(fields[15 - 3]) / CLOCK_TICKS };
}

/**
 * The machine's counters that say what else went on during a run (Linux; each null where it cannot
 * be read): every core's busy time and the hypervisor's steal, in seconds (/proc/stat), the time some
 * task waited for I/O, in seconds (/proc/pressure/io, `some`), and the load average of the last
 * minute. Two readings go to machineBeside.
 */
export function machineCounters() {
  const stat = readProc('/proc/stat');
  // user nice system idle iowait irq softirq steal, in clock ticks.
  const cpu = stat ? stat.split('\n')[0].trim().split(/\s+/).slice(1).map(Number) : null;
  const io = /^some .*total=(\d+)/m.exec(readProc('/proc/pressure/io') ?? '');
  return {
    busyS: cpu ? (cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7]) / CLOCK_TICKS : null,
    stealS: cpu ? cpu[7] / CLOCK_TICKS : null,
    ioWaitS: io ? Number(io[1]) / 1e6 : null,
    load1: os.loadavg()[0],
  };
}

/**
 * What else the machine did between two machineCounters readings, beside a run that used `ownCpuS`
 * seconds of CPU: other processes' CPU seconds, steal and I/O wait seconds, and the load average
 * before. A run that drifts from its neighbours with one of these up did not run alone.
 */
export function machineBeside(before, after, ownCpuS) {
  const delta = (k) => (before[k] === null || after[k] === null ? null : after[k] - before[k]);
  const busy = delta('busyS');
  return {
    other_cpu_s: busy === null || ownCpuS === null ? null : Math.max(0, busy - ownCpuS),
    steal_s: delta('stealS'),
    io_wait_s: delta('ioWaitS'),
    load1_before: before.load1,
  };
}

/** Waits until the server at `base` answers /readyz with 200, polling every half second; throws after five minutes. */
export async function untilReady(base) {
  for (let i = 0; ; i++) {
    if (i > 600) throw new Error('server not ready');
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(500);
  }
}

/**
 * Waits until the server at `base` builds nothing in the background (its /readyz lists what it
 * derives from the graph and where each stands), at most `maxS` seconds; then at least `minS`
 * seconds have passed; `onPoll` runs at every look (about once a second). Resolves with the states
 * seen last and the seconds waited.
 */
export async function settle(base, { minS = 0, maxS = 600, onPoll = () => {} } = {}) {
  const started = performance.now();
  const waited = () => (performance.now() - started) / 1000;
  let derived = {};
  for (;;) {
    const body = await fetch(`${base}/readyz`).then(
      (r) => r.json(),
      () => ({}),
    );
    derived = body.derived ?? {};
    onPoll();
    const building = Object.values(derived).includes('building');
    if ((!building && waited() >= minS) || waited() >= maxS) break;
    await sleep(1000);
  }
  return { derived, seconds: waited() };
}

/** The key bench servers are started with. */
export const SERVE_KEY = 'tiergraph-bench-key-000000000000';

async function getJson(url) {
  try {
    const r = await fetch(url, {
      headers: { 'X-SERVICE-KEY': SERVE_KEY },
      signal: AbortSignal.timeout(5000),
    });
    return { status: r.status, body: await r.json().catch(() => null) };
  } catch {
    return { status: 0, body: null };
  }
}

/** The first company of a dataset (its companies.csv's second line's first field). */
function firstVid(datasetDir) {
  const fd = fs.openSync(path.join(datasetDir, 'companies.csv'), 'r');
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

/**
 * Starts the built server `cli` on the embedded store in `dataDir` (read cache off) and watches it
 * until nothing is building in the background, at most `settleS` seconds: when /readyz first
 * answered 200, when each derived state was first seen, the largest RSS (sampled every second),
 * what it logged at warn level or above; then asks a search, a profile and a first supplier page of
 * the dataset's first company once, and stops it.
 */
export async function serveUntilSettled({ cli, dataDir, datasetDir, settleS }) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const at = () => Math.round(performance.now() - started) / 1000;
  const child = spawn(process.execPath, serveArgs(cli), {
    env: {
      ...serveEnv(cli),
      DATA_DIR: dataDir,
      STORE: 'embedded',
      PORT: String(port),
      HOST: '127.0.0.1',
      API_KEYS: SERVE_KEY,
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
      // Ready is timed to a tenth of a second (a start on saved files takes a few), the rest to a second.
      await sleep(readyAt === null ? 100 : 1000);
    }
    const settledAt = at();
    const vid = firstVid(datasetDir);
    const checks = {
      search: (await getJson(`${base}/v1/companies/?name=precision`)).status,
      profile: (await getJson(`${base}/v1/companies/${vid}/`)).status,
      suppliers: (await getJson(`${base}/v1/companies/${vid}/suppliers/?limit=10`)).status,
    };
    rssPeak = Math.max(rssPeak, rssBytes(child.pid) ?? 0);
    // The kernel's own high-water mark: a peak of a second or less falls between the samples above.
    const hwm = rssBytes(child.pid, true);
    return {
      readyS: readyAt,
      settledS: settledAt,
      derived,
      firstSeen,
      rssPeakMiB: Math.round(rssPeak / 2 ** 20),
      vmHwmMiB: hwm === null ? null : Math.round(hwm / 2 ** 20),
      checks,
      warnings,
    };
  } finally {
    child.kill('SIGTERM');
    for (let i = 0; i < 300 && !exited; i++) await sleep(100);
    if (!exited) child.kill('SIGKILL');
  }
}

/**
 * Profile reads of random companies among `vids` over 8 connections, until stopped
 * (`reads.stop()`; awaiting `reads` then gives autocannon's result).
 */
export function profileReads(base, key, vids) {
  return autocannon({
    url: base,
    connections: 8,
    duration: 3600,
    headers: { 'X-SERVICE-KEY': key },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          path: `/v1/companies/${vids[Math.floor(Math.random() * vids.length)]}/`,
        }),
      },
    ],
  });
}

/** The one saved search index beside the embedded store of bench/run.mjs in `dataDir`. */
export function savedSearchIndex(dataDir) {
  const graphDir = path.join(dataDir, 'store', 'graph');
  const saved = fs.existsSync(graphDir)
    ? fs.readdirSync(graphDir).filter((f) => f.endsWith('.search-index'))
    : [];
  if (saved.length !== 1) {
    throw new Error(
      `expected one saved search index in ${graphDir} (start the server on the store once), found ${saved.length}`,
    );
  }
  return path.join(graphDir, saved[0]);
}

/**
 * The saved search index of `dataDir` (see savedSearchIndex) loaded in this process with this build's
 * dist/, and its file; throws when this build does not read it.
 */
export function loadSavedSearchIndex(dataDir) {
  const require = createRequire(import.meta.url);
  const { CompanySearchIndex } = require(path.join(ROOT, 'dist', 'src', 'search', 'company-search.js'));
  const { SnapshotReader } = require(path.join(ROOT, 'dist', 'src', 'store', 'snapshot.js'));
  const file = savedSearchIndex(dataDir);
  const index = CompanySearchIndex.load(file, SnapshotReader.keyOf(file));
  if (!index)
    throw new Error(`${file} is not a search index this build reads (rebuilt at the next server start)`);
  return { file, index };
}

/** Writes `data` and the machine it ran on to bench/results/<name>-<timestamp>.json; returns the path. */
export function writeResults(name, data) {
  const out = path.join(
    ROOT,
    'bench',
    'results',
    `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, load: os.loadavg() };
  fs.writeFileSync(out, JSON.stringify({ machine, ...data }, null, 1));
  return out;
}

/**
 * Streams a CSV file, calling onRow with the wanted columns' values; the header row decides their positions.
 * onRow may return a promise (to apply backpressure), which is awaited before the next row.
 */
export async function eachCsvRow(file, wanted, onRow) {
  const parser = fs
    .createReadStream(file)
    .pipe(parseCsv({ bom: true, relax_column_count: true, skip_empty_lines: true }));
  let index = null;
  for await (const record of parser) {
    if (index === null) {
      index = wanted.map((names) => {
        const i = record.findIndex((h) => names.includes(h.trim()));
        if (i < 0) throw new Error(`${file}: none of the columns ${names.join(', ')} in the header`);
        return i;
      });
      continue;
    }
    const pending = onRow(index.map((i) => record[i] ?? ''));
    if (pending) await pending;
  }
}

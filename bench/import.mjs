// Import benchmark: runs the built CLI's `tiergraph import` (dist/, so `npm run build`
// first) on the generated dataset, each run into a fresh DATA_DIR, and reports the
// wall time, the rows the CLI counted and its two phases. Prints a table with the
// median of the runs and writes every run to bench/results/import-<timestamp>.json.
//   node bench/import.mjs [--data-dir bench/data] [--runs 3] [--store embedded|neo4j|neo4j-admin]
//                         [--launcher DIR] [--first-start] [--settle 1800] [--busy]
// With --busy, a process spinning on one core (`node -e "for(;;){}"`) runs beside each import
// (not beside a first start): on two cores, issue 13's "with the other core busy".
// With --first-start (embedded store), each import is followed by a server started on its
// DATA_DIR, timed to ready and to nothing building in the background (what it derives that the
// import did not write: the list heads, and whatever the import left out), with
// its largest RSS: the import's time to a server at full speed.
// Each run's peak RSS is the import process's own (all its threads; /proc's VmHWM, read every
// quarter second, so a peak shorter than that may be missed); with --store neo4j-admin the largest
// of its three commands'.
// Beside each run it reports what else the machine did meanwhile (machineBeside in common.mjs): the
// CPU of every other process (the spinner of --busy among them, and with --store neo4j the Neo4j
// server's), the hypervisor's steal, the time tasks waited for I/O, and the load average before.
// The dataset comes from bench/run.mjs (or `tiergraph generate --out <data-dir>/dataset`).
// With --store neo4j the NEO4J_* variables of the environment are used, and every
// run imports into the same database (a re-import is an upsert).
// --store neo4j-admin times the bulk path for a first load, in three steps: `tiergraph
// import --neo4j-admin-files` into a fresh directory; neo4j-admin's importer on those
// files into a new NEO4J_HOME; a server on the loaded data and `tiergraph migrate`,
// which creates the constraints and indexes and waits until they are online (what
// the first open of a server does). Neo4j's tools and server come from the launcher
// that .ci/services.sh builds (--launcher, default TEST_NEO4J_LAUNCHER): its class
// path holds the same importer as the neo4j-admin of a Neo4j 5.26 installation.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CLI,
  CLOCK_TICKS,
  ROOT,
  freePort,
  machineBeside,
  machineCounters,
  median,
  parseArgs,
  rssBytes,
  serveUntilSettled,
  statFields,
} from './common.mjs';

const args = parseArgs();
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const runs = Number(args.runs ?? 3);
const store = args.store ?? 'embedded';
const dataset = path.join(dataDir, 'dataset');
const launcher = args.launcher ?? process.env.TEST_NEO4J_LAUNCHER;
const firstStart = 'first-start' in args;
const settleS = Number(args.settle ?? 1800);
const busy = 'busy' in args;
if (firstStart && store !== 'embedded') throw new Error('--first-start needs --store embedded');
if (!['embedded', 'neo4j', 'neo4j-admin'].includes(store))
  throw new Error('--store takes embedded, neo4j or neo4j-admin');
if (store === 'neo4j-admin' && !(launcher && fs.existsSync(path.join(launcher, 'classpath.txt'))))
  throw new Error(
    '--store neo4j-admin needs --launcher DIR (or TEST_NEO4J_LAUNCHER): the build directory of .ci/neo4j',
  );

const log = (s) => process.stderr.write(`[import-bench] ${s}\n`);

if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
if (!fs.existsSync(path.join(dataset, 'companies.csv')))
  throw new Error(`no dataset in ${dataset}: run bench/run.mjs or tiergraph generate first`);

/**
 * CPU seconds (user and system) of this process's children that have ended and been waited
 * for, from /proc/self/stat's cutime and cstime; null where there is no /proc. The difference
 * across one command is that command's CPU, all its threads: beside its wall time it shows
 * whether a slower run did more work or ran on a slower machine.
 */
function childrenCpuSeconds() {
  const fields = statFields('/proc/self/stat');
  return fields === null ? null : (Number(fields[16 - 3]) + Number(fields[17 - 3])) / CLOCK_TICKS;
}

/**
 * Runs a command to its end; resolves to its output, wall and CPU seconds and peak RSS (MiB, null
 * where unknown), rejects on a non-zero exit.
 */
function run(command, argv, opts = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const cpuBefore = childrenCpuSeconds();
    const child = spawn(command, argv, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let peak = null;
    // A high-water mark: the last reading before the exit is the peak, but for its last moments.
    const watch = setInterval(() => (peak = rssBytes(child.pid, true) ?? peak), 250);
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      clearInterval(watch);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpuAfter = childrenCpuSeconds();
      const cpuSeconds = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
      if (code !== 0)
        return reject(new Error(`${path.basename(command)} exited ${code}: ${(err || out).slice(-2000)}`));
      resolve({
        out,
        err,
        seconds,
        cpuSeconds,
        peakRssMiB: peak === null ? null : Math.round(peak / 2 ** 20),
      });
    });
  });
}

/** The CLI's summary line: rows, and its two phases. */
function parseImport(out) {
  const m =
    /(?:Imported|Wrote bulk-load files of) ([\d,]+) rows? from \d+ files?(?: \([\d,]+ rejected\))? in [\d.]+ s \(([\d,]+) rows\/s; validate\+derive ([\d.]+) s, load ([\d.]+) s\)/.exec(
      out,
    );
  if (!m) throw new Error(`unexpected import output: ${out}`);
  return { rows: Number(m[1].replace(/,/g, '')), stageSeconds: Number(m[3]), loadSeconds: Number(m[4]) };
}

async function importOnce(workDir) {
  const env = { ...process.env, DATA_DIR: workDir, STORE: store, LOG_LEVEL: 'warn' };
  if (store !== 'neo4j-admin') {
    const r = await run(process.execPath, [CLI, 'import', dataset], { env });
    return {
      seconds: r.seconds,
      cpuSeconds: r.cpuSeconds,
      peakRssMiB: r.peakRssMiB,
      ...parseImport(r.out),
      output: r.out,
    };
  }
  const files = path.join(workDir, 'files');
  const written = await run(process.execPath, [CLI, 'import', dataset, '--neo4j-admin-files', files], {
    env: { ...env, STORE: 'embedded' },
  });
  const parsed = parseImport(written.out);
  const classPath = fs.readFileSync(path.join(launcher, 'classpath.txt'), 'utf8').trim();
  const home = path.join(workDir, 'home');
  fs.mkdirSync(path.join(home, 'conf'), { recursive: true });
  fs.writeFileSync(path.join(home, 'conf', 'neo4j.conf'), '');
  log(`  files written in ${written.seconds.toFixed(1)} s; neo4j-admin database import full`);
  const loaded = await run(
    'java',
    ['-cp', classPath, 'org.neo4j.cli.AdminTool', 'database', 'import', 'full', 'neo4j', '@import.args'],
    { cwd: files, env: { ...process.env, NEO4J_HOME: home, NEO4J_CONF: path.join(home, 'conf') } },
  );
  const done = /IMPORT DONE in ([^.]+)\./.exec(loaded.out);
  log(
    `  loaded in ${loaded.seconds.toFixed(1)} s (${done?.[1] ?? '?'} by its own count); starting a server on it`,
  );
  fs.rmSync(files, { recursive: true, force: true });
  const port = await freePort();
  const server = spawn(
    'java',
    [
      '-Xms1g',
      '-Xmx4g',
      '-XX:+UseG1GC',
      '--add-opens=java.base/java.nio=ALL-UNNAMED',
      '--add-opens=java.base/java.io=ALL-UNNAMED',
      '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
      '-Dio.netty.tryReflectionSetAccessible=true',
      '-cp',
      `${path.join(launcher, 'neo4j-test-server-1.jar')}${path.delimiter}${classPath}`,
      'tiergraph.ci.Neo4jTestServer',
      path.join(workDir, 'server'),
      String(port),
      path.join(home, 'data'),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    const serverStarted = process.hrtime.bigint();
    await new Promise((resolve, reject) => {
      let said = '';
      const hear = (d) => {
        said += d;
        if (said.includes('neo4j: ready')) resolve();
      };
      server.stdout.on('data', hear);
      server.stderr.on('data', hear);
      server.once('exit', (code) =>
        reject(new Error(`Neo4j exited ${code} before it was ready: ${said.slice(-2000)}`)),
      );
    });
    const startSeconds = Number(process.hrtime.bigint() - serverStarted) / 1e9;
    const migrated = await run(process.execPath, [CLI, 'migrate'], {
      env: {
        ...env,
        STORE: 'neo4j',
        NEO4J_URI: `bolt://127.0.0.1:${port}`,
        NEO4J_USER: 'neo4j',
        NEO4J_PASSWORD: 'unused',
      },
    });
    log(
      `  server ready in ${startSeconds.toFixed(1)} s, schema created and online in ${migrated.seconds.toFixed(1)} s`,
    );
    return {
      seconds: written.seconds + loaded.seconds + migrated.seconds,
      cpuSeconds: sumOrNull([written.cpuSeconds, loaded.cpuSeconds, migrated.cpuSeconds]),
      peakRssMiB: maxOrNull([written.peakRssMiB, loaded.peakRssMiB, migrated.peakRssMiB]),
      ...parsed,
      filesSeconds: written.seconds,
      adminSeconds: loaded.seconds,
      serverStartSeconds: startSeconds,
      migrateSeconds: migrated.seconds,
      output: written.out,
    };
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
}

function sumOrNull(xs) {
  return xs.some((x) => x === null) ? null : xs.reduce((a, b) => a + b, 0);
}

function maxOrNull(xs) {
  return xs.some((x) => x === null) ? null : Math.max(...xs);
}

/** What else the machine did during a run, in words (machineBeside's figures). */
function besideText(b) {
  const s = (x) => (x === null ? '?' : x.toFixed(1));
  return `beside it: other processes ${s(b.other_cpu_s)} s of CPU${busy ? ' (the spinning process among them)' : ''}, steal ${s(b.steal_s)} s, I/O wait ${s(b.io_wait_s)} s, load ${b.load1_before.toFixed(2)} before`;
}

/** Runs fn, with --busy beside a process that keeps one core busy until fn has ended. */
async function withBusyCore(fn) {
  if (!busy) return fn();
  const spinner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  const gone = new Promise((resolve) => spinner.once('exit', resolve));
  const stop = () => spinner.kill('SIGKILL');
  // Should this script end on an error, the spinner must not stay behind.
  process.once('exit', stop);
  try {
    return await fn();
  } finally {
    stop();
    await gone;
    process.removeListener('exit', stop);
  }
}

const results = [];
for (let i = 0; i < runs; i++) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-import-bench-'));
  try {
    log(`run ${i + 1}/${runs} into ${workDir}${busy ? ', the other core kept busy' : ''}`);
    const before = machineCounters();
    const r = await withBusyCore(() => importOnce(workDir));
    r.beside = machineBeside(before, machineCounters(), r.cpuSeconds);
    log(
      `  ${r.seconds.toFixed(1)} s${r.cpuSeconds === null ? '' : ` (${r.cpuSeconds.toFixed(1)} s of CPU)`}, ${r.rows.toLocaleString('en-US')} rows${r.peakRssMiB === null ? '' : `, peak RSS ${r.peakRssMiB} MiB`}; ${besideText(r.beside)}`,
    );
    if (firstStart) {
      r.firstStart = await serveUntilSettled({ cli: CLI, dataDir: workDir, datasetDir: dataset, settleS });
      const f = r.firstStart;
      log(
        `  first start: ready ${f.readyS} s, settled ${f.settledS} s, RSS peak ${f.rssPeakMiB} MiB (sampled) ${f.vmHwmMiB} MiB (VmHWM), checks ${JSON.stringify(f.checks)}, ${f.warnings.length} warnings`,
      );
    }
    results.push(r);
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

const rows = results[0].rows;
const total = median(results.map((r) => r.seconds));
const cpu = results.flatMap((r) => (r.cpuSeconds === null ? [] : [r.cpuSeconds]));
const peaks = results.flatMap((r) => (r.peakRssMiB === null ? [] : [r.peakRssMiB]));
const summary = {
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
  store,
  busy,
  runs,
  rows,
  median_seconds: total,
  median_rows_per_s: Math.round(rows / total),
  median_stage_seconds: median(results.map((r) => r.stageSeconds)),
  median_load_seconds: median(results.map((r) => r.loadSeconds)),
  runs_seconds: results.map((r) => Number(r.seconds.toFixed(1))),
  median_cpu_seconds: cpu.length === results.length ? median(cpu) : null,
  runs_cpu_seconds: cpu.length === results.length ? cpu.map((c) => Number(c.toFixed(1))) : null,
  median_peak_rss_mib: peaks.length === results.length ? median(peaks) : null,
  runs_peak_rss_mib: peaks.length === results.length ? peaks : null,
  ...(firstStart
    ? {
        median_first_ready_seconds: median(results.map((r) => r.firstStart.readyS)),
        median_first_settled_seconds: median(results.map((r) => r.firstStart.settledS)),
        median_first_rss_peak_mib: median(results.map((r) => r.firstStart.rssPeakMiB)),
        median_first_vm_hwm_mib: median(results.map((r) => r.firstStart.vmHwmMiB)),
      }
    : {}),
};
process.stdout.write(
  [
    `machine: ${summary.machine}`,
    `store: ${store}, dataset: ${dataset}${busy ? ', the other core kept busy by a spinning process' : ''}`,
    `| what | median of ${runs} |`,
    '|---|---:|',
    `| rows of the dataset's files | ${rows.toLocaleString('en-US')} |`,
    `| validate, derive, stage | ${summary.median_stage_seconds.toFixed(1)} s |`,
    ...(store === 'neo4j-admin'
      ? [
          `| write the bulk-load files | ${summary.median_load_seconds.toFixed(1)} s |`,
          `| tiergraph import --neo4j-admin-files (wall) | ${median(results.map((r) => r.filesSeconds)).toFixed(1)} s |`,
          `| neo4j-admin database import full (wall) | ${median(results.map((r) => r.adminSeconds)).toFixed(1)} s |`,
          `| tiergraph migrate: constraints and indexes online (wall; server start apart) | ${median(results.map((r) => r.migrateSeconds)).toFixed(1)} s |`,
          `| whole first load (the three above) | ${total.toFixed(1)} s |`,
        ]
      : [
          `| bulk load | ${summary.median_load_seconds.toFixed(1)} s |`,
          `| whole import (wall, process start to exit) | ${total.toFixed(1)} s |`,
        ]),
    ...(firstStart
      ? [
          `| first start after it: ready | ${summary.median_first_ready_seconds} s |`,
          `| first start after it: nothing building | ${summary.median_first_settled_seconds} s |`,
          `| first start after it: RSS peak | ${summary.median_first_rss_peak_mib} MiB |`,
        ]
      : []),
    ...(summary.median_cpu_seconds === null
      ? []
      : [`| CPU, all threads (user and system) | ${summary.median_cpu_seconds.toFixed(1)} s |`]),
    ...(summary.median_peak_rss_mib === null
      ? []
      : [`| peak RSS of the import | ${summary.median_peak_rss_mib} MiB |`]),
    `| rows/s | ${summary.median_rows_per_s.toLocaleString('en-US')} |`,
    `runs: ${summary.runs_seconds.join(' s, ')} s`,
    ...(summary.runs_cpu_seconds === null ? [] : [`CPU: ${summary.runs_cpu_seconds.join(' s, ')} s`]),
    ...(summary.runs_peak_rss_mib === null
      ? []
      : [`peak RSS: ${summary.runs_peak_rss_mib.join(' MiB, ')} MiB`]),
    ...results.map((r, i) => `run ${i + 1}, ${besideText(r.beside)}`),
    '',
  ].join('\n'),
);
const resultsDir = path.join(ROOT, 'bench', 'results');
fs.mkdirSync(resultsDir, { recursive: true });
fs.writeFileSync(
  path.join(resultsDir, `import-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify({ ...summary, results: results.map(({ output: _o, ...r }) => r) }, null, 2),
);

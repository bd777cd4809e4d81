// What Node's own HTTP server lets a handler reach on this machine, as bench/run.mjs measures the
// service: a plain `node:http` server (no express, nothing of tiergraph) whose handler works a given
// number of microseconds on its thread and then answers a fixed JSON body, loaded with autocannon
// from this process over 32 connections. Each amount of work is reported as a ratio of request rates
// to the handler that does none, which is what bench/run.mjs's ratios to /healthz are, with the
// server's CPU per answer, its kernel part, and what the answer cost beyond the work itself.
//
//   node bench/http-floor.mjs [--work 0,10,20,40,60,100] [--bytes 1000] [--duration 10] [--runs 3]
//
// Reads the server process's CPU from /proc (Linux). Writes bench/results/http-floor-<time>.json.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { freePort, median, parseArgs, sleep, statCpu, writeResults } from './common.mjs';

const args = parseArgs();

if (args.serve !== undefined) serve(Number(args.serve), Number(args.bytes ?? 1000));
else await main();

/** The server: `GET /<µs>` spins that many microseconds, then answers `bytes` bytes of JSON. */
function serve(port, bytes) {
  const body = JSON.stringify({ data: 'x'.repeat(Math.max(0, bytes - 11)) });
  http
    .createServer((req, res) => {
      const until = performance.now() + Number(req.url.slice(1)) / 1000;
      while (performance.now() < until);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(body));
      res.end(body);
    })
    .listen(port, '127.0.0.1', () => process.send?.('listening'));
  process.on('disconnect', () => process.exit(0));
}

async function main() {
  const work = String(args.work ?? '0,10,20,40,60,100')
    .split(',')
    .map(Number);
  if (work.some((w) => !(w >= 0 && Number.isFinite(w))))
    throw new Error('--work takes microseconds, e.g. 0,10,20');
  if (!work.includes(0)) work.unshift(0);
  const bytes = Number(args.bytes ?? 1000);
  const duration = Number(args.duration ?? 10);
  const runs = Number(args.runs ?? 3);
  const connections = Number(args.connections ?? 32);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), '--serve', String(port), '--bytes', String(bytes)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  try {
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const load = (w, seconds) =>
      autocannon({ url: `http://127.0.0.1:${port}/${w}`, connections, duration: seconds });
    const results = Object.fromEntries(work.map((w) => [w, []]));
    for (let run = 1; run <= runs; run++) {
      for (const w of work) {
        await load(w, 2); // the server's code optimised for this amount of work before it is measured
        const before = cpuOf(child.pid);
        const r = await load(w, duration);
        const after = cpuOf(child.pid);
        if (r.non2xx || r.errors) throw new Error(`work ${w} µs: ${r.non2xx} non-2xx, ${r.errors} errors`);
        const n = r.requests.total;
        results[w].push({
          rps: r.requests.average,
          cpu_us: ((after.user + after.system - before.user - before.system) * 1e6) / n,
          system_us: ((after.system - before.system) * 1e6) / n,
        });
        console.error(`run ${run}, work ${w} µs: ${Math.round(r.requests.average)} req/s`);
      }
      await sleep(500);
    }
    const base = results[0];
    const rows = work.map((w) => {
      const rs = results[w];
      const ratio = median(rs.map((r, i) => r.rps / base[i].rps));
      const cpu = median(rs.map((r) => r.cpu_us));
      return {
        work_us: w,
        rps: median(rs.map((r) => r.rps)),
        ratio,
        cpu_us: cpu,
        system_us: median(rs.map((r) => r.system_us)),
        beyond_work_us: cpu - w,
        runs: rs,
      };
    });
    console.log(
      `answers of ${bytes} bytes, ${connections} connections, ${duration} s a case, median of ${runs}`,
    );
    console.log('work µs | req/s  | ratio | server CPU µs | of it kernel | beyond the work');
    for (const r of rows)
      console.log(
        `${String(r.work_us).padStart(7)} | ${String(Math.round(r.rps)).padStart(6)} | ${r.ratio.toFixed(3)} | ${r.cpu_us.toFixed(1).padStart(13)} | ${r.system_us.toFixed(1).padStart(12)} | ${r.beyond_work_us.toFixed(1)}`,
      );
    console.log(`results: ${writeResults('http-floor', { bytes, connections, duration, runs, rows })}`);
  } finally {
    child.kill();
  }
}

/** CPU seconds (user, system) of process `pid`, all its threads. */
function cpuOf(pid) {
  const cpu = statCpu(`/proc/${pid}/stat`);
  if (cpu === null) throw new Error(`cannot read the CPU time of process ${pid} from /proc (Linux only)`);
  return cpu;
}

import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, tempDir } from '../support/paths';
import { inCi } from '../support/services';

/**
 * Requests generated from /openapi.json by schemathesis, against the real server
 * in a process of its own (a crash there fails this test with its output instead
 * of ending jest). Seeded and bounded, so a run is repeatable and short.
 */
const ST = process.env.SCHEMATHESIS_BIN || null;
const HINT =
  'set SCHEMATHESIS_BIN to a schemathesis 4.x `st` (`source .ci/services.sh` installs one from PyPI into ~/.cache/tiergraph-ci)';
const KEY = 'schemathesis-key-0123456789abcdef';

if (ST === null && inCi()) throw new Error(`schemathesis is required under CI=true; ${HINT}`);
if (ST === null) process.stderr.write(`skipping "schemathesis against /openapi.json": ${HINT}\n`);
const suite = ST === null ? describe.skip : describe;

interface Server {
  child: ChildProcess;
  base: string;
  output: string[];
}

function startServer(): Promise<Server> {
  const output: string[] = [];
  const child = spawn(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'test/support/ts-register.js'),
      path.join(ROOT, 'test/support/queue-process.child.ts'),
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: tempDir('schemathesis'),
        API_KEYS: KEY,
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        JOBS_POLL_MS: '200',
        // Generated tier-view requests may carry callback URLs; this host passes the allow-list.
        CALLBACK_HOSTS: '127.0.0.1',
        CALLBACK_ALLOW_HTTP: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server not ready within 60 s: ${output.join('')}`)),
      60_000,
    );
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /ready (\d+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: `http://127.0.0.1:${m[1]}`, output });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${String(code ?? signal)}) before it listened: ${output.join('')}`));
    });
  });
}

suite('schemathesis against /openapi.json', () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer();
  }, 70_000);
  afterAll(async () => {
    const { child } = server ?? {};
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  });

  it('answers every generated request without a server error, and stays up', async () => {
    const reports = tempDir('schemathesis-report');
    let crashed: string | null = null;
    server.child.once('exit', (code, signal) => (crashed = String(signal ?? code)));
    const st = await new Promise<{ status: number | null; out: string }>((resolve) => {
      const p = spawn(
        ST!,
        [
          'run',
          `${server.base}/openapi.json`,
          '-H',
          `X-SERVICE-KEY: ${KEY}`,
          '--checks',
          'not_a_server_error',
          '--seed',
          '1',
          '--workers',
          '1',
          '--max-examples',
          '10',
          '--max-time',
          '60',
          '--request-timeout',
          '20',
          '--report',
          'har',
          '--report-dir',
          reports,
        ],
        // schemathesis keeps state in its working directory: a temporary one, never the checkout.
        { cwd: reports, env: { ...process.env, NO_COLOR: '1' } },
      );
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (out += d.toString()));
      p.on('close', (status) => resolve({ status, out }));
    });
    if (crashed !== null) {
      throw new Error(
        `the server process ended (${String(crashed)}) during the run; requests in ${reports}\n` +
          `${server.output.join('').slice(-4000)}\n${st.out.slice(-4000)}`,
      );
    }
    if (st.status !== 0)
      throw new Error(`schemathesis failed (exit ${String(st.status)}):\n${st.out.slice(-8000)}`);
    // The run did test something: operations and cases were counted.
    expect(st.out).toMatch(/\d+ (passed|cases)/);
    expect(server.output.join('')).not.toMatch(/"level":(50|60)/);
  }, 180_000);
});

/** The version check keeps a wrong binary from passing by testing nothing. */
suite('schemathesis binary', () => {
  it('is schemathesis 4.x', () => {
    const v = spawnSync(ST!, ['--version'], { encoding: 'utf8' });
    expect(v.stdout).toMatch(/version 4\./);
  });
});

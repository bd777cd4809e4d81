import fs from 'node:fs';
import pino from 'pino';
import path from 'node:path';
import { loadConfig } from '../../src/config/env';
import type { Config } from '../../src/config/env';
import { createLogger } from '../../src/logger';
import type { Logger } from '../../src/logger';
import { startServer } from '../../src/server';
import type { RunningServer } from '../../src/server';
import { splitStatements } from '../../src/store/cypher-files';
import { readSeed, tempDir } from './paths';

export const TEST_KEY = 'test-key-0123456789abcdef';

export interface TestServer {
  running: RunningServer;
  base: string;
  dataDir: string;
  /** fetch with the API key (unless headers say otherwise). */
  get(pathAndQuery: string, headers?: Record<string, string>): Promise<Response>;
  post(pathAndQuery: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Stops the server; `keepData` leaves the data directory for a restart. */
  stop(keepData?: boolean): Promise<void>;
}

/** A test server's configuration: loopback, an ephemeral port, the test key, quiet, quick job polls; `env` wins. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    API_KEYS: TEST_KEY,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'silent',
    JOBS_POLL_MS: '100',
    JOB_LOCK_S: '2',
    ...env,
  });
}

/**
 * The real service on an ephemeral loopback port, with its own data directory,
 * loaded with the hand-made seed graph (or nothing).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  seed: string | null = 'test-small.cypher',
  log: Logger = createLogger('silent'),
): Promise<TestServer> {
  const dataDir = env.DATA_DIR ?? tempDir('http');
  const config = testConfig(dataDir, env);
  const running = await startServer(config, log);
  // Ready as /readyz would say: searches answered.
  await running.searchReady;
  if (seed) {
    await running.store.runScript(splitStatements(readSeed(seed)));
    await running.search.rebuild();
  }
  const base = `http://127.0.0.1:${running.port}`;
  const withKey = (headers: Record<string, string>) => ({ 'X-SERVICE-KEY': TEST_KEY, ...headers });
  return {
    running,
    base,
    dataDir,
    get: (p, headers = {}) => fetch(`${base}${p}`, { headers: withKey(headers) }),
    post: (p, body, headers = {}) =>
      fetch(`${base}${p}`, {
        method: 'POST',
        headers: withKey({ 'content-type': 'application/json', ...headers }),
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    stop: async (keepData = false) => {
      await running.close();
      if (!keepData) fs.rmSync(path.resolve(dataDir), { recursive: true, force: true });
    },
  };
}

/** A logger that keeps every line at `warn` and above, to check what a request logged. */
export function recordingLogger(level: 'info' | 'warn' = 'warn'): {
  log: Logger;
  lines: { level: number; msg?: string }[];
} {
  const lines: { level: number; msg?: string }[] = [];
  const log = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number }) });
  return { log, lines };
}

/** pino's number for `error`. */
export const ERROR_LEVEL = 50;

import fs from 'node:fs';
import path from 'node:path';
import type { AgendaBackend } from 'agenda';
import type { BlobStore } from '../../src/blobs/blob-store';
import { loadConfig } from '../../src/config/env';
import type { JobsEngine } from '../../src/jobs/engines/jobs-engine';
import { jobQueueOptions } from '../../src/jobs/job-queue.options';
import type { RunStore } from '../../src/jobs/run-store';
import { createLogger } from '../../src/logger';
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';
import { tempDir } from '../support/paths';

const agendaBackend = { name: 'stand-in' } as unknown as AgendaBackend;
const runs = {} as unknown as RunStore;
const engine: JobsEngine = { agendaBackend, runs, close: () => Promise.resolve() };
const parts = {
  engine,
  store: {} as unknown as GraphStore,
  blobs: {} as unknown as BlobStore,
  tierview: {} as unknown as TierViewService,
  log: createLogger('silent'),
};

describe('jobQueueOptions', () => {
  it('maps every queue setting of the validated config', () => {
    const dataDir = tempDir('queue-options');
    const config = loadConfig({
      DATA_DIR: dataDir,
      JOBS_WORKER: 'false',
      JOBS_CONCURRENCY: '3',
      JOBS_MAX_QUEUED_PER_KEY: '7',
      JOB_TIMEOUT_S: '120',
      JOB_LOCK_S: '30',
      JOBS_POLL_MS: '250',
      MAX_TIERS: '4',
      DOWNLOAD_TTL_S: '600',
      EXPORT_RETENTION_S: '7200',
      CALLBACK_ALLOW_HTTP: 'true',
    });
    const limits = { maxPageSize: 50, maxOffset: 500 };
    const options = jobQueueOptions(config, { ...parts, limits });
    expect(options).toMatchObject({
      agendaBackend,
      runs,
      limits,
      worker: false,
      shared: false,
      concurrency: 3,
      maxActivePerKey: 7,
      timeoutS: 120,
      lockS: 30,
      pollMs: 250,
      maxTiers: 4,
      downloadTtlS: 600,
      retentionS: 7200,
      callbacks: { rules: [], allowHttp: true, publicOnly: false, sender: null },
    });
    // No allowed host: no sender, so no signing secret is created either.
    expect(fs.existsSync(path.join(dataDir, 'callback-secret'))).toBe(false);
  });

  it('builds a callback sender from the retry settings when a host is allowed', () => {
    const dataDir = tempDir('queue-options');
    const config = loadConfig({
      DATA_DIR: dataDir,
      CALLBACK_HOSTS: 'hooks.example.com',
      CALLBACK_MAX_ATTEMPTS: '4',
    });
    const { callbacks } = jobQueueOptions(config, parts);
    expect(callbacks.rules).toHaveLength(1);
    expect(callbacks.sender?.maxAttempts).toBe(4);
    // The signing secret is created on first use when none is configured.
    expect(fs.existsSync(path.join(dataDir, 'callback-secret'))).toBe(true);
  });

  it('gives callbacks to public addresses only when told to, at submission and in the sender', async () => {
    const config = loadConfig({
      DATA_DIR: tempDir('queue-options'),
      CALLBACK_HOSTS: '127.0.0.1',
      CALLBACK_PUBLIC_ONLY: 'true',
    });
    const { callbacks } = jobQueueOptions(config, parts);
    expect(callbacks.publicOnly).toBe(true);
    // Refused before any connection is tried (nothing listens on port 9 either).
    expect(await callbacks.sender?.attempt(new URL('https://127.0.0.1:9/x'), '{}', 'id')).toEqual({
      kind: 'refused',
      status: null,
      error: '127.0.0.1 is an address callbacks may not reach on this server',
    });
    await callbacks.sender?.close();
  });
});

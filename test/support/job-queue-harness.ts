import path from 'node:path';
import { LocalBlobStore } from '../../src/blobs/local/local.blob-store';
import { JobQueue } from '../../src/jobs/job-queue';
import type { JobQueueOptions } from '../../src/jobs/job-queue';
import type { JobsEngine } from '../../src/jobs/engines/jobs-engine';
import { openJobsEngine } from '../../src/jobs/open-jobs-engine';
import type { JobsEngineConfig } from '../../src/jobs/open-jobs-engine';
import { createLogger } from '../../src/logger';
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';

/** A JobQueue on the embedded jobs engine under `dataDir`, with the given store and export service (or a maker given its blob store). */
export function makeQueue(
  dataDir: string,
  store: GraphStore,
  tierview: TierViewService | ((blobs: LocalBlobStore) => TierViewService),
  overrides: Partial<JobQueueOptions> = {},
  jobs: Partial<JobsEngineConfig> = {},
): { queue: JobQueue; engine: JobsEngine; blobs: LocalBlobStore } {
  const engine = openJobsEngine({ JOBS_BACKEND: 'embedded', dataDir, ...jobs }, createLogger('silent'));
  const blobs = new LocalBlobStore(dataDir, () => 'http://127.0.0.1:1', 'x'.repeat(32));
  const queue = new JobQueue({
    agendaBackend: engine.agendaBackend,
    runs: engine.runs,
    store,
    blobs,
    tierview: typeof tierview === 'function' ? tierview(blobs) : tierview,
    log: createLogger('silent'),
    worker: true,
    concurrency: 2,
    timeoutS: 60,
    lockS: 2,
    pollMs: 100,
    maxTiers: 6,
    downloadTtlS: 3600,
    retentionS: 86_400,
    callbacks: { rules: [], allowHttp: false, sender: null },
    ...overrides,
  });
  return { queue, engine, blobs };
}

export const jobsFile = (dataDir: string) => path.join(dataDir, 'jobs', 'jobs.sqlite');

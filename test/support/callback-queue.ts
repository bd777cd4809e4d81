import type { JobQueueOptions } from '../../src/jobs/job-queue';
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';
import { makeQueue } from './job-queue-harness';

/** A store in which every root exists. */
export const anyRoot = { companyExists: () => Promise.resolve(true) } as unknown as GraphStore;

/** An export that succeeds at once with no files. */
export const finishedExport = {
  export: () => Promise.resolve({ files: {}, companies: 0, rows: 0, bytes: 0, dropped: {} }),
} as unknown as TierViewService;

/**
 * A worker queue whose runs end at once, on the jobs engine `engineSettings`
 * (`JOBS_BACKEND` and its URL setting; embedded under `dataDir` when empty).
 */
export function makeCallbackQueue(
  dataDir: string,
  engineSettings: Record<string, string>,
  overrides: Partial<JobQueueOptions>,
): ReturnType<typeof makeQueue> {
  return makeQueue(dataDir, anyRoot, finishedExport, overrides, engineSettings);
}

import type { Job } from 'agenda';
import { createLogger } from '../../src/logger';
import type { RunStore } from '../../src/jobs/run-store';
import type { TierViewService } from '../../src/services/tierview.service';
import type { BlobStore } from '../../src/blobs/blob-store';
import { TierViewJob } from '../../src/jobs/tierview.job';

function makeJob(reads: number[]): TierViewJob {
  const runs = {
    get: (id: number) => {
      reads.push(id);
      return Promise.resolve(null);
    },
  } as unknown as RunStore;
  return new TierViewJob({
    runs,
    blobs: {} as BlobStore,
    tierview: {} as TierViewService,
    log: createLogger('silent'),
    concurrency: 3,
    timeoutS: 60,
    lockS: 10,
    now: () => new Date(),
    owesCallback: () => false,
    notify: () => Promise.resolve(),
    publicRunId: (runId) => runId,
  });
}

const agendaJob = (data: unknown) => ({ attrs: { _id: 'j1', data } }) as unknown as Job<unknown>;

describe('TierViewJob', () => {
  it('validates its input once: job data without a positive integer run id touches no run', async () => {
    const reads: number[] = [];
    const job = makeJob(reads);
    for (const data of [undefined, {}, { run_id: '7' }, { run_id: 0 }, { run_id: 1.5 }]) {
      await job.perform(agendaJob(data));
    }
    expect(reads).toEqual([]);
    await job.perform(agendaJob(TierViewJob.input(7)));
    expect(reads).toEqual([7]);
  });

  it('locks no more jobs than it runs, and leaves no queue row once one is over', () => {
    expect(makeJob([]).defineOptions).toEqual({
      concurrency: 3,
      lockLimit: 3,
      lockLifetime: 10_000,
      removeOnComplete: true,
    });
  });
});

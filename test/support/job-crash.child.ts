// Queues `count` runs (argv[3]) and starts exporting as many as the queue runs at
// once, then hangs until the parent kills the process (SIGKILL, no clean-up): the
// running runs are left RUNNING with their locks held, the others queued.
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';
import { makeQueue } from './job-queue-harness';

async function main(): Promise<void> {
  const dataDir = process.argv[2]!;
  const count = Number(process.argv[3] ?? '1');
  const store = { companyExists: () => Promise.resolve(true) } as unknown as GraphStore;
  let started = 0;
  const hanging = {
    export: (runId: number, ...rest: unknown[]) => {
      // Found by type, so the stand-in keeps working whatever the arguments around it.
      const onProgress = rest.find((a) => typeof a === 'function') as (p: unknown) => void;
      onProgress({ phase: 'companies', tier: 0, tiers: 3, companies: 0, rows: 0 });
      process.stdout.write(`exporting ${runId}\n`);
      if (++started === Math.min(2, count)) process.stdout.write('ready\n');
      return new Promise(() => undefined);
    },
  } as unknown as TierViewService;
  const { queue } = makeQueue(dataDir, store, hanging, { concurrency: 2, lockS: 1, pollMs: 100 });
  await queue.start();
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const run = await queue.submit({
      root_nodes: 'boeing',
      num_tiers: 3,
      direction: 'supplier',
      min_evid_date: null,
      output_multiple_tables: false,
      callback_url: null,
    });
    ids.push(run.runId);
  }
  process.stdout.write(`runs ${ids.join(',')}\n`);
}

void main();

// Queues one run and starts exporting it, then hangs until the parent kills the
// process (SIGKILL, no clean-up): the run is left RUNNING and its lock held.
import type { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';
import { makeQueue } from './job-queue-harness';

async function main(): Promise<void> {
  const dataDir = process.argv[2]!;
  const store = { companyExists: () => Promise.resolve(true) } as unknown as GraphStore;
  const hanging = {
    export: (_id: number, _req: unknown, onProgress: (p: unknown) => void) => {
      onProgress({ phase: 'companies', tier: 0, tiers: 3, companies: 0, rows: 0 });
      process.stdout.write('exporting\n');
      return new Promise(() => undefined);
    },
  } as unknown as TierViewService;
  const { queue } = makeQueue(dataDir, store, hanging);
  await queue.start();
  const run = await queue.submit({
    root_nodes: 'boeing',
    num_tiers: 3,
    direction: 'supplier',
    min_evid_date: null,
    output_multiple_tables: false,
    callback_url: null,
  });
  process.stdout.write(`run ${run.runId}\n`);
}

void main();

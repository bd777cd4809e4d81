// Queues one run with a completion callback and keeps delivering it until the
// parent kills the process (SIGKILL, no clean-up). argv: data dir, callback URL,
// jobs engine settings as JSON.
import { parseCallbackHosts } from '../../src/domain/callback-hosts';
import { CallbackSender } from '../../src/jobs/callbacks';
import { makeCallbackQueue } from './callback-queue';

async function main(): Promise<void> {
  const [dataDir, url, engineJson] = process.argv.slice(2) as [string, string, string];
  const { queue } = makeCallbackQueue(dataDir, JSON.parse(engineJson) as Record<string, string>, {
    callbacks: {
      rules: parseCallbackHosts('127.0.0.1'),
      allowHttp: true,
      sender: new CallbackSender({
        secret: 'x'.repeat(32),
        baseDelayMs: 2000,
        maxDelayMs: 2000,
        timeoutMs: 1000,
      }),
    },
  });
  await queue.start();
  const run = await queue.submit({
    root_nodes: 'boeing',
    num_tiers: 1,
    direction: 'supplier',
    min_evid_date: null,
    output_multiple_tables: false,
    callback_url: url,
  });
  process.stdout.write(`run ${run.runId}\n`);
}

void main();

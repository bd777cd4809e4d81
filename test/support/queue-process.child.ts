// One tiergraph process for the multi-process queue test: the real server, on the
// embedded store seeded with test-small.cypher, configured from its environment.
// TEST_SLOW_WALK_MS slows every batch an export writes, so that the parent can
// kill the process while an export is under way. Prints "ready <port>".
import { loadConfig } from '../../src/config/env';
import { createLogger } from '../../src/logger';
import { startServer } from '../../src/server';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { embeddedStore } from '../../src/store/open-store';
import type { TierWalkRequest, TierWalkSink } from '../../src/store/graph-store';
import { readSeed } from './paths';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const slowMs = Number(process.env.TEST_SLOW_WALK_MS ?? 0);
  if (slowMs > 0) {
    const walk = EmbeddedGraphStore.prototype.walkTiers;
    EmbeddedGraphStore.prototype.walkTiers = function (
      this: EmbeddedGraphStore,
      request: TierWalkRequest,
      sink: TierWalkSink,
      signal?: AbortSignal,
    ) {
      const slow: TierWalkSink = {
        companies: async (batch) => {
          await sleep(slowMs);
          await sink.companies(batch);
        },
        relationships: async (tier, batch) => {
          await sleep(slowMs);
          await sink.relationships(tier, batch);
        },
      };
      return walk.call(this, request, slow, signal);
    };
  }
  const config = loadConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  // The graph is there before the server starts, as in a deployment: a worker takes
  // runs as soon as it starts.
  const seeding = embeddedStore(config, log);
  await seeding.open();
  if ((await seeding.stats()).companies === 0)
    await seeding.runScript(splitStatements(readSeed('test-small.cypher')));
  await seeding.close();
  const running = await startServer(config, log);
  // Ready as /readyz would say: searches answered.
  await running.searchReady;
  process.stdout.write(`ready ${running.port}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});

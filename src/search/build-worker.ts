/**
 * A worker thread that builds the search index from the rows the main thread reads from the store
 * (see build-thread.ts) and hands the index back in shared memory; the main thread then ends it.
 */
import { parentPort } from 'node:worker_threads';
import type { SearchRow } from '../domain/search-row';
import { CompanySearchIndex } from './company-search';
import type { BuildThreadReply, BuildThreadRequest } from './build-thread';

const port = parentPort!;
const reply = (m: BuildThreadReply) => port.postMessage(m);
/** Batches that came before the build asked for them. */
const early: SearchRow[][] = [];
let take: ((rows: SearchRow[]) => void) | null = null;
let ended: () => void = () => undefined;
const end = new Promise<void>((resolve) => (ended = resolve));

port.on('message', (m: BuildThreadRequest) => {
  if (m.type === 'end') return ended();
  if (take) take(m.rows);
  else early.push(m.rows);
  reply({ type: 'taken', rows: m.rows.length });
});

CompanySearchIndex.build({
  async scanSearchRows(onBatch) {
    take = (rows) => void onBatch(rows);
    for (const rows of early.splice(0)) take(rows);
    await end;
  },
})
  .then((index) => reply({ type: 'built', shared: index.toShared() }))
  .catch((err: unknown) =>
    reply({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );

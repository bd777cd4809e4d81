/**
 * A worker thread that answers searches over the index the main thread loaded into shared memory
 * (see search-threads.ts): the same arrays, no copy. It holds one index at a time, of the store
 * generation named with it, and answers a search only for that generation.
 */
import { parentPort } from 'node:worker_threads';
import { CompanySearchIndex } from './company-search';
import type { SearchThreadReply, SearchThreadRequest } from './search-threads';

let held: { generation: number; index: CompanySearchIndex | null } | null = null;

parentPort!.on('message', (m: SearchThreadRequest) => {
  if (m.type === 'index') {
    held = { generation: m.generation, index: CompanySearchIndex.fromShared(m.shared) };
    return;
  }
  let reply: SearchThreadReply;
  try {
    const index = held?.generation === m.generation ? held.index : null;
    reply = { id: m.id, result: index ? index.search(m.criteria) : null };
  } catch (err) {
    reply = { id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  parentPort!.postMessage(reply);
});

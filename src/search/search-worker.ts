/**
 * A worker thread that answers searches and suggestions over the index the main thread loaded into shared memory
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
    if (!index) reply = { id: m.id, result: null };
    else if (m.type === 'search') reply = { id: m.id, result: index.search(m.criteria) };
    else {
      const { query, limit, includeSubsidiaries } = m.suggest;
      reply = { id: m.id, result: index.suggest(query, limit, includeSubsidiaries) };
    }
  } catch (err) {
    reply = { id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  parentPort!.postMessage(reply);
});

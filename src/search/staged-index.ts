import type { Logger } from '../logger';
import type { LoadAlongside } from '../store/graph-store';
import { scanStagedSearchRows } from '../store/staged-search-rows';
import { buildSearchIndex } from './build-thread';
import { SEARCH_INDEX_NAME } from './search-index-holder';

/**
 * An import's search index, built from its staging files while the store loads them, and saved
 * where a server looks for the index of that data (see SearchIndexHolder): the first start after
 * an import then loads it in seconds, instead of reading every company back from the store and
 * indexing them (some 40 s at 1M companies, before searches are answered).
 */
export function searchIndexAlongside(log?: Logger): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const started = Date.now();
    // Read on this thread and indexed on a thread of its own: a thread that did both took twice as long.
    const { index } = await buildSearchIndex(
      { scanSearchRows: (onBatch) => scanStagedSearchRows(stagingDir, onBatch) },
      log,
      { signal },
    );
    signal.throwIfAborted();
    const { file, key } = derivedFile(SEARCH_INDEX_NAME);
    await index.save(file, key);
    log?.info({ companies: index.size, ms: Date.now() - started, file }, 'search index of the import saved');
  };
}

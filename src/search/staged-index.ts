import type { Logger } from '../logger';
import type { LoadAlongside } from '../store/graph-store';
import { scanStagedSearchRows } from '../store/staged-search-rows';
import { saveSearchIndex } from './build-thread';
import type { FedSearchIndex } from './build-thread';
import { SEARCH_INDEX_NAME } from './search-index-holder';

/**
 * An import's search index, saved where a server looks for the index of that data (see
 * SearchIndexHolder): the first start after an import then loads it in seconds, instead of reading
 * every company back from the store and indexing them (some 40 s at 1M companies, before searches
 * are answered). With `fed`, the index the import's staging fed (see feedSearchIndex), mostly built
 * by the time the store loads; without it, or should that build have failed, the index is built
 * from the Company staging file while the store loads the same data.
 */
export function searchIndexAlongside(log?: Logger, fed?: FedSearchIndex): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const started = Date.now();
    const { file, key } = derivedFile(SEARCH_INDEX_NAME);
    let companies: number | null = null;
    if (fed) {
      companies = await fed.save(file, key, signal).then(
        (saved) => saved.companies,
        (err: unknown) => {
          if (signal.aborted) throw err;
          log?.warn({ err }, 'search index fed by the staging failed; building it from the staging files');
          return null;
        },
      );
    }
    if (companies === null) {
      // Read on this thread and indexed on a thread of its own: a thread that did both took twice as long.
      // Saved by the thread that built it: nothing of the index comes to this one.
      const saved = await saveSearchIndex(
        { scanSearchRows: (onBatch) => scanStagedSearchRows(stagingDir, onBatch) },
        log,
        { file, key },
        { signal },
      );
      companies = saved.companies;
    }
    log?.info({ companies, ms: Date.now() - started, file }, 'search index of the import saved');
  };
}

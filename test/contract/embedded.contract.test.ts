import fs from 'node:fs';
import path from 'node:path';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import type { GraphStore } from '../../src/store/graph-store';
import { graphStoreContract } from './graph-store.contract';
import { tempDir } from '../support/paths';

const dirs = new Map<unknown, string>();

/** An empty embedded store in a directory of its own, with the adapter options given. */
function opener(
  label: string,
  options: Pick<EmbeddedStoreOptions, 'keyedStepMax' | 'walkMemory' | 'pointFile' | 'pointFileEdges'> = {},
) {
  return async (): Promise<GraphStore> => {
    const dir = tempDir(label);
    const store = new EmbeddedGraphStore({
      dir: path.join(dir, 'graph'),
      connections: 2,
      bufferPoolMb: 256,
      ...options,
    });
    await store.open();
    dirs.set(store, dir);
    return store;
  };
}

async function dispose(store: GraphStore): Promise<void> {
  await store.close();
  fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
}

graphStoreContract('embedded', opener('contract'), dispose);

// The adapter reads a short frontier key by key and a long one with one `IN` query; the fixture's
// frontiers are all short, so the contract runs again with every frontier read at once.
graphStoreContract(
  'embedded, every frontier in one query',
  opener('contract-in', { keyedStepMax: 0 }),
  dispose,
);

// Walks whose rows show names only and filter by date alone run over the relationships held in
// memory when the store keeps them; the contract runs again with every such walk waiting for them.
graphStoreContract('embedded, walks from memory', opener('contract-memory', { walkMemory: 'wait' }), dispose);

// Profiles, edges and list counterparts come from the point-read file when the store writes one;
// the contract runs again with every such read waiting for the file of the data as it is.
graphStoreContract(
  'embedded, point reads from file',
  opener('contract-points', { pointFile: 'wait', pointFileEdges: true }),
  dispose,
);

import fs from 'node:fs';
import path from 'node:path';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { graphStoreContract } from './graph-store.contract';
import { tempDir } from '../support/paths';

const dirs = new Map<unknown, string>();

graphStoreContract(
  'embedded',
  async () => {
    const dir = tempDir('contract');
    const store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 256 });
    await store.open();
    dirs.set(store, dir);
    return store;
  },
  async (store) => {
    await store.close();
    fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
  },
);

// The adapter reads a short frontier key by key and a long one with one `IN` query; the fixture's
// frontiers are all short, so the contract runs again with every frontier read at once.
graphStoreContract(
  'embedded, every frontier in one query',
  async () => {
    const dir = tempDir('contract-in');
    const store = new EmbeddedGraphStore({
      dir: path.join(dir, 'graph'),
      connections: 2,
      bufferPoolMb: 256,
      keyedStepMax: 0,
    });
    await store.open();
    dirs.set(store, dir);
    return store;
  },
  async (store) => {
    await store.close();
    fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
  },
);

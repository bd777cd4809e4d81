import fs from 'node:fs';
import type { GraphStore } from '../../src/store/graph-store';
import { graphStoreContract } from './graph-store.contract';
import { NEO4J_HINT, emptyNeo4j, neo4jAvailability, openNeo4jStore, startNeo4j } from '../support/neo4j';
import type { Neo4jTarget } from '../support/neo4j';
import { tempDir } from '../support/paths';
import { skipVisibly } from '../support/services';

// The same contract as the embedded engine's, on a real Neo4j 5 server.
if (neo4jAvailability() === null) {
  skipVisibly(describe.skip, 'GraphStore contract: neo4j', NEO4J_HINT, () => {
    it('runs against Neo4j', () => undefined);
  });
} else {
  jest.setTimeout(180_000);
  let target: Neo4jTarget | null = null;
  const opener =
    (options: Parameters<typeof openNeo4jStore>[1] = {}) =>
    async () => {
      target ??= await startNeo4j();
      await emptyNeo4j(target);
      return openNeo4jStore(target, options);
    };
  const dispose = async (store: GraphStore) => {
    await store.close();
    if (target) await emptyNeo4j(target);
    await target?.stop();
    target = null;
  };
  graphStoreContract('neo4j', opener(), dispose);
  // A server holds every relationship in memory for tier walks and answers point reads from a
  // file; the contract runs again with every walk waiting for the memory of the data as it is,
  // and every profile, edge and list counterpart for the file.
  const derivedDir = tempDir('neo4j-contract');
  afterAll(() => fs.rmSync(derivedDir, { recursive: true, force: true }));
  graphStoreContract(
    'neo4j, walks from memory, point reads from the file',
    opener({ walkMemory: 'wait', pointFile: 'wait', derivedDir }),
    dispose,
  );
}

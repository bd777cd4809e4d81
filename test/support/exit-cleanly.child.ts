// Opened, queried, failed a query, closed: the process must then exit with 0.
import path from 'node:path';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';

async function main(): Promise<void> {
  const dir = process.argv[2]!;
  const store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 3, bufferPoolMb: 128 });
  await store.open();
  await store.runScript([
    "CREATE (:Company {vid: 'x', name: 'X', cid_id: 'x', cluster_parent_vid: 'x', cluster_size: 1})",
  ]);
  await Promise.all([store.getCompany('x'), store.getCompanies([]), store.stats(), store.getEdge('none')]);
  await store.runScript(['MATCH (n:NoSuchTable) RETURN n']).catch(() => undefined);
  await store.close();
  process.stdout.write('closed\n');
}

void main();

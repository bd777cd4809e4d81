// Opens the embedded store in DIR/graph and says how that went: `opened`, or the error's message.
import path from 'node:path';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';

async function main(): Promise<void> {
  const store = new EmbeddedGraphStore({
    dir: path.join(process.argv[2]!, 'graph'),
    connections: 1,
    bufferPoolMb: 64,
  });
  try {
    await store.open();
  } catch (err) {
    process.stdout.write(err instanceof Error ? err.message : String(err));
    return;
  }
  await store.close();
  process.stdout.write('opened');
}

void main();

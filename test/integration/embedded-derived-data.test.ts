import fs from 'node:fs';
import path from 'node:path';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { readSeed, tempDir } from '../support/paths';

describe('embedded store: where derived data is saved, and under which key', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('derived');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const open = async () => {
    const store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 1, bufferPoolMb: 128 });
    await store.open();
    return store;
  };

  it('gives a key that survives a restart and changes with every seed', async () => {
    const store = await open();
    const empty = store.derivedDataFile('search-index')!;
    expect(path.dirname(empty.file)).toBe(path.join(dir, 'graph'));
    await store.runScript(splitStatements(readSeed('test-small.cypher')));
    const seeded = store.derivedDataFile('search-index')!;
    expect(seeded.file).toBe(empty.file);
    expect(seeded.key).not.toBe(empty.key);
    fs.writeFileSync(seeded.file, 'saved');
    await store.close();

    const again = await open();
    expect(again.derivedDataFile('search-index')).toEqual(seeded);
    await again.runScript(["MATCH (c:Company {vid: 'lonely'}) SET c.name = 'Lonely Isle'"]);
    expect(again.derivedDataFile('search-index')!.key).not.toBe(seeded.key);
    await again.close();
  });
});

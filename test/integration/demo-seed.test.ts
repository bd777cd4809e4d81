import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { splitStatements } from '../../src/store/cypher-files';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { readSeed, tempDir } from '../support/paths';

describe('seed/demo.cypher', () => {
  let dir: string;
  let seeded: EmbeddedGraphStore;
  let imported: EmbeddedGraphStore;
  beforeAll(async () => {
    dir = tempDir('demo-seed');
    seeded = new EmbeddedGraphStore({ dir: path.join(dir, 'seeded'), connections: 1, bufferPoolMb: 128 });
    imported = new EmbeddedGraphStore({ dir: path.join(dir, 'imported'), connections: 1, bufferPoolMb: 128 });
    await seeded.open();
    await imported.open();
    await seeded.runScript(splitStatements(readSeed('demo.cypher')));
    // The seed's own header names the generator run it was written from.
    await generateDataset({ companies: 40, seed: 7, outDir: path.join(dir, 'dataset') });
    await importDirectory(imported, path.join(dir, 'dataset'), { workDir: dir });
  });
  afterAll(async () => {
    await seeded.close();
    await imported.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('holds the same graph as importing the generator run it names', async () => {
    const stats = await seeded.stats();
    expect(stats.companies).toBe(40);
    expect(stats).toEqual(await imported.stats());
    const vids: string[] = [];
    await imported.scanSearchRows((rows) => void vids.push(...rows.map((r) => r.vid)));
    expect(vids).toHaveLength(40);
    for (const vid of vids) {
      const company = await imported.getCompany(vid);
      expect(company?.vid).toBe(vid);
      expect(await seeded.getCompany(vid)).toEqual(company);
      const q = { minConfidence: 0, evidenceFrom: null, limit: 100, offset: 0 };
      expect(await seeded.listRelationships(vid, 'suppliers', 'cluster', q)).toEqual(
        await imported.listRelationships(vid, 'suppliers', 'cluster', q),
      );
    }
  });

  it('keeps evidence metadata intact through the string literals', async () => {
    const withMeta = fs
      .readFileSync(path.join(dir, 'dataset', 'evidence.csv'), 'utf8')
      .split('\n')
      .some((l) => l.includes('lang'));
    expect(withMeta).toBe(true);
    const edges: string[] = [];
    for (const m of readSeed('demo.cypher').matchAll(/CREATE \(:Edge \{edge_id: '([^']+)'/g))
      edges.push(m[1]!);
    expect(edges.length).toBeGreaterThan(0);
    for (const id of edges) {
      const edge = await imported.getEdge(id);
      expect(edge?.edge_id).toBe(id);
      expect(await seeded.getEdge(id)).toEqual(edge);
    }
  });
});

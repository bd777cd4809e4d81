import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { csvColumn } from '../support/factories';
import { tempDir } from '../support/paths';

/**
 * An import loads its graph uncompressed unless told otherwise (the engine's load of 1M companies
 * is about 5 s shorter so): a server opens it as any other graph, compressing what it writes itself.
 */
describe('the compression of an imported graph', () => {
  let dir: string;
  let input: string;
  let vids: string[];
  let edgeIds: string[];
  const graphOf = (name: string) => path.join(dir, name, 'graph');
  const store = (name: string, options: Partial<EmbeddedStoreOptions> = {}) =>
    new EmbeddedGraphStore({ dir: graphOf(name), connections: 1, bufferPoolMb: 128, ...options });
  /** Bytes of the current generation's graph file. */
  const graphBytes = (name: string) => {
    const current = fs.readFileSync(path.join(graphOf(name), 'CURRENT'), 'utf8').trim();
    return fs.statSync(path.join(graphOf(name), current)).size;
  };

  beforeAll(async () => {
    dir = tempDir('import-compression');
    input = path.join(dir, 'dataset');
    await generateDataset({ companies: 1500, seed: 5, outDir: input });
    vids = csvColumn(path.join(input, 'companies.csv'), 'vid');
    edgeIds = csvColumn(path.join(input, 'relationships.csv'), 'edge_id');
    for (const [name, options] of [
      ['plain', {}],
      ['compressed', { importCompression: true }],
    ] as const) {
      const importer = store(name, options);
      await importer.open();
      try {
        await importDirectory(importer, input, { workDir: path.join(dir, name), searchIndex: false });
      } finally {
        await importer.close();
      }
    }
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is off by default: the same data takes more disk than compressed', () => {
    // Over 7,000 relationships, each number, date and string offset takes its full width uncompressed.
    expect(edgeIds.length).toBeGreaterThan(5000);
    expect(graphBytes('plain')).toBeGreaterThan(graphBytes('compressed') * 1.2);
  });

  it('gives every profile, edge and list as the compressed graph does, and takes a seed on top', async () => {
    const plain = store('plain');
    const compressed = store('compressed');
    await plain.open();
    await compressed.open();
    try {
      expect(await plain.stats()).toEqual(await compressed.stats());
      const q = { minConfidence: 0, evidenceFrom: null, limit: 100, offset: 0 };
      expect(vids.length).toBeGreaterThan(1000);
      for (const vid of vids) {
        const company = await compressed.getCompany(vid);
        expect(company?.vid).toBe(vid);
        expect(await plain.getCompany(vid)).toEqual(company);
        for (const direction of ['suppliers', 'customers'] as const)
          expect(await plain.listRelationships(vid, direction, 'company', q)).toEqual(
            await compressed.listRelationships(vid, direction, 'company', q),
          );
      }
      expect(edgeIds.length).toBeGreaterThan(0);
      for (const id of edgeIds) {
        const edge = await compressed.getEdge(id);
        expect(edge?.edge_id).toBe(id);
        expect(await plain.getEdge(id)).toEqual(edge);
      }

      // A server's own writes go into the uncompressed graph (compressed, as it always writes them).
      await plain.runScript([`MATCH (c:Company {vid: '${vids[0]}'}) SET c.description = 'seeded on top'`]);
      expect((await plain.getCompany(vids[0]!))?.description).toBe('seeded on top');
      expect(await plain.getCompany(vids[1]!)).toEqual(await compressed.getCompany(vids[1]!));
    } finally {
      await plain.close();
      await compressed.close();
    }
  }, 120_000);
});

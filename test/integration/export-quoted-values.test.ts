import fs from 'node:fs';
import path from 'node:path';
import type { SearchRow } from '../../src/domain/search-row';
import type { TierRelationship } from '../../src/domain/tier-walk';
import type { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { refuseEngineExports } from '../support/engine-exports';
import { tempDir } from '../support/paths';
import { openSeededStore } from '../support/seeded-store';

/**
 * The embedded store reads its point-read file's profiles and edges, the walks' memory's
 * relationships and the search index's rows from files the engine writes as staging text. No import
 * stages a tab or a line break, but a Cypher seed may store one, and the engine then quotes the value,
 * which staging text cannot carry: such data is read range by range, with a warning, and answered
 * as the engine answers it.
 */
describe('embedded store: values a staging-text export cannot carry', () => {
  let dirs: string[];
  let logged: string[];
  beforeEach(() => {
    dirs = [];
    logged = [];
  });
  afterEach(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const DESCRIPTION = 'two\nlines\tand a tab';
  const NAME = 'Bolt\tCastings\nLtd';
  const LABEL = 'sup\tply';
  const HS_CODES = '[73\t26]';
  /** Statements that store a tab or a line break in a company, an edge and a relationship. */
  const ODD = [
    `MATCH (c:Company {vid: 'bolt'}) SET c.description = '${DESCRIPTION}', c.name = '${NAME}'`,
    `MATCH (e:Edge {edge_id: 'e1'}) SET e.label = '${LABEL}'`,
    `MATCH ()-[r:SUPPLIES {edge_id: 'e1'}]->() SET r.hs_codes = '${HS_CODES}'`,
  ];

  /** The test seed with ODD run on it, logging into `logged`. */
  const open = async (options: Partial<EmbeddedStoreOptions>) => {
    const dir = tempDir('export-quoted');
    dirs.push(dir);
    const store = await openSeededStore(dir, logged, options);
    await store.runScript(ODD);
    return store;
  };
  /** Files of the engine's exports left beside any store's graph. */
  const exportsLeft = () =>
    dirs.flatMap((d) => fs.readdirSync(path.join(d, 'graph')).filter((f) => f.includes('-rows')));
  const warned = (text: string) =>
    logged.filter((l) => l.includes('"level":40') && l.includes(text) && l.includes('a tab or a line break'))
      .length;

  it('writes the point-read file range by range and answers as the engine does', async () => {
    const file = await open({ pointFile: 'wait', pointFileEdges: true });
    const engine = await open({ pointFile: 'off' });
    try {
      const read = (s: EmbeddedGraphStore) =>
        Promise.all([s.getCompany('bolt'), s.getCompany('boeing'), s.getEdge('e1'), s.getEdge('e2')]);
      const got = await read(file);
      expect(got).toEqual(await read(engine));
      expect(got[0]?.description).toBe(DESCRIPTION);
      expect(got[2]?.label).toBe(LABEL);
      expect(logged.filter((l) => l.includes('point-read file written'))).toHaveLength(1);
      expect(warned('profiles for the point-read file read range by range')).toBe(1);
      expect(warned('edges for the point-read file read range by range')).toBe(1);
      expect(exportsLeft()).toEqual([]);
    } finally {
      await file.close();
      await engine.close();
    }
  });

  it('holds the relationships for tier walks, read range by range, and walks as the engine does', async () => {
    const memory = await open({ walkMemory: 'wait' });
    const engine = await open({ walkMemory: 'off' });
    try {
      const walk = async (s: EmbeddedGraphStore) => {
        const rows: TierRelationship[] = [];
        await s.walkTiers(
          { root: 'boeing', direction: 'suppliers', tiers: 3, evidenceFrom: null, companyDetails: false },
          { companies: () => undefined, relationships: (_t, b) => void rows.push(...b) },
        );
        return rows.sort((a, b) => a.edge_id.localeCompare(b.edge_id) || a.supplier.tier - b.supplier.tier);
      };
      const got = await walk(memory);
      expect(got).toEqual(await walk(engine));
      expect(got.find((r) => r.edge_id === 'e1')?.hs_codes).toEqual(['73\t26']);
      expect(logged.filter((l) => l.includes('relationships held in memory for tier walks'))).toHaveLength(1);
      expect(warned('relationships for the tier walks read range by range')).toBe(1);
      expect(exportsLeft()).toEqual([]);
    } finally {
      await memory.close();
      await engine.close();
    }
  });

  it('reads the search rows range by range, as it reads them when the engine cannot write the file', async () => {
    const store = await open({});
    try {
      const scan = async () => {
        const rows: SearchRow[] = [];
        await store.scanSearchRows((batch) => void rows.push(...batch));
        return rows.sort((a, b) => a.vid.localeCompare(b.vid));
      };
      const got = await scan();
      expect(got.find((r) => r.vid === 'bolt')?.core.name).toBe(NAME);
      expect(warned('search rows read range by range')).toBe(1);
      const refused = refuseEngineExports('IO exception: No space left on device');
      try {
        expect(got).toEqual(await scan());
      } finally {
        refused.mockRestore();
      }
      expect(exportsLeft()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { importDirectory } from '../../src/import/import-directory';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import { ROOT, tempDir } from '../support/paths';
import {
  NEO4J_HINT,
  dumpNeo4j as dump,
  emptyNeo4j,
  neo4jAvailability,
  openNeo4jStore,
  startNeo4j,
} from '../support/neo4j';
import type { Neo4jTarget } from '../support/neo4j';

const fixture = path.join(ROOT, 'test', 'fixtures', 'import', 'tiny');

if (neo4jAvailability() === null) {
  process.stderr.write(`skipping "import into Neo4j": ${NEO4J_HINT}\n`);
  describe.skip(`import into Neo4j (skipped: ${NEO4J_HINT})`, () => {
    it('imports', () => undefined);
  });
} else {
  describe('import into Neo4j', () => {
    jest.setTimeout(180_000);
    let target: Neo4jTarget;
    let store: Neo4jGraphStore;
    let work: string;
    beforeAll(async () => {
      target = await startNeo4j();
      await emptyNeo4j(target);
      store = await openNeo4jStore(target);
      work = tempDir('neo4j-import');
    });
    afterAll(async () => {
      await store?.close();
      if (target) await emptyNeo4j(target);
      await target?.stop();
      fs.rmSync(work, { recursive: true, force: true });
    });

    it('loads the files in batches, with the same answers as the embedded engine', async () => {
      const progress: string[] = [];
      await importDirectory(store, fixture, { workDir: work, onLoad: (table) => progress.push(table) });
      expect(new Set(progress)).toEqual(new Set(['Company', 'Edge', 'SUPPLIES', 'CLUSTER_SUPPLIES']));
      const embeddedDir = tempDir('neo4j-import-embedded');
      const embedded = new EmbeddedGraphStore({
        dir: path.join(embeddedDir, 'graph'),
        connections: 1,
        bufferPoolMb: 128,
      });
      try {
        await embedded.open();
        await importDirectory(embedded, fixture, { workDir: embeddedDir });
        await expect(store.stats()).resolves.toEqual(await embedded.stats());
        await expect(store.getCompany('A')).resolves.toEqual(await embedded.getCompany('A'));
        const q = { minConfidence: 0, evidenceFrom: null, limit: 50, offset: 0 };
        await expect(store.listRelationships('A', 'suppliers', 'cluster', q)).resolves.toEqual(
          await embedded.listRelationships('A', 'suppliers', 'cluster', q),
        );
      } finally {
        await embedded.close();
        fs.rmSync(embeddedDir, { recursive: true, force: true });
      }
    });

    it('changes nothing when the same files are imported again', async () => {
      const before = await dump(target);
      expect(before.length).toBeGreaterThan(0);
      await importDirectory(store, fixture, { workDir: work });
      expect(await dump(target)).toEqual(before);
    });

    it("stores lists of strings as real lists, so users' own Cypher can test membership", async () => {
      const driver = neo4j.driver(target.uri, neo4j.auth.basic(target.user, target.password));
      const session = driver.session({ database: target.database });
      try {
        const res = await session.run(
          `CALL () { MATCH (c:Company) UNWIND [c.domains, c.websites] AS v RETURN valueType(v) AS t
             UNION ALL MATCH ()-[r:SUPPLIES]->() UNWIND [r.hs_codes, r.evidence_types] AS v RETURN valueType(v) AS t
             UNION ALL MATCH ()-[r:CLUSTER_SUPPLIES]->() UNWIND [r.edge_ids, r.evidence_types] AS v RETURN valueType(v) AS t
             UNION ALL MATCH (e:Edge) RETURN valueType(e.hs_codes) AS t }
           RETURN t, count(*) AS n ORDER BY t`,
        );
        const types = res.records.map((r) => r.get('t') as string);
        expect(types.length).toBeGreaterThan(0);
        expect(types.filter((t) => !t.startsWith('LIST'))).toEqual([]);
        const member = await session.run(
          'MATCH ()-[r:SUPPLIES]->() WHERE size(r.hs_codes) > 0 WITH r LIMIT 1 MATCH ()-[x:SUPPLIES]->() WHERE r.hs_codes[0] IN x.hs_codes RETURN count(x) AS n',
        );
        expect(Number(member.records[0]!.get('n'))).toBeGreaterThan(0);
      } finally {
        await session.close();
        await driver.close();
      }
    });

    it('makes identifiers and addresses findable by their indexes', async () => {
      const driver = neo4j.driver(target.uri, neo4j.auth.basic(target.user, target.password));
      const session = driver.session({ database: target.database });
      try {
        const res = await session.run('SHOW INDEXES YIELD name RETURN collect(name) AS names');
        expect(res.records[0]!.get('names')).toEqual(
          expect.arrayContaining([
            'company_vid',
            'company_cid_id',
            'edge_edge_id',
            'supplies_edge_id',
            'identifier_value',
            'address_city',
            'address_country',
          ]),
        );
      } finally {
        await session.close();
        await driver.close();
      }
    });
  });
}

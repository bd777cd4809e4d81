import fs from 'node:fs';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { generateDataset } from '../../src/demo/generate';
import type { SearchRow } from '../../src/domain/search-row';
import { importDirectory } from '../../src/import/import-directory';
import { stageImport } from '../../src/import/stage';
import { CompanySearchIndex } from '../../src/search/company-search';
import { SEARCH_INDEX_NAME, SearchIndexHolder } from '../../src/search/search-index-holder';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import { PointFile } from '../../src/store/point-file';
import { scanStagedSearchRows } from '../../src/store/staged-search-rows';
import { appendRows, companyRow, csvColumn } from '../support/factories';
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
import { recordingLogger } from '../support/server';
import { skipVisibly } from '../support/services';

const fixture = path.join(ROOT, 'test', 'fixtures', 'import', 'tiny');

if (neo4jAvailability() === null) {
  skipVisibly(describe.skip, 'import into Neo4j', NEO4J_HINT, () => {
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

    describe('the search index built beside the load', () => {
      let dir: string;
      let input: string;
      let importer: Neo4jGraphStore;
      let server: Neo4jGraphStore;
      const { log, lines } = recordingLogger();
      const crit = (name: string, sort: 'relevance' | 'similarity' = 'relevance') => ({
        name,
        sort,
        limit: 10,
        offset: 0,
        minSimilarity: 0.3,
        includeSubsidiaries: false,
      });
      beforeAll(async () => {
        dir = tempDir('neo4j-import-index');
        input = path.join(dir, 'dataset');
        await generateDataset({ companies: 250, seed: 11, outDir: input });
        // The CLI and a running server, on the same DATA_DIR.
        importer = await openNeo4jStore(target, { derivedDir: dir, importBatchSize: 500, logger: log });
        server = await openNeo4jStore(target, { derivedDir: dir });
      });
      afterAll(async () => {
        await importer?.close();
        await server?.close();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      it('reads from the staging files the rows Neo4j gives once they are loaded', async () => {
        const staging = path.join(dir, 'staging-rows');
        await stageImport(input, staging, {});
        await importer.replaceAll(staging);
        const staged: SearchRow[] = [];
        await scanStagedSearchRows(staging, (rows) => void staged.push(...rows), 64);
        const loaded: SearchRow[] = [];
        await importer.scanSearchRows((rows) => void loaded.push(...rows));
        const byVid = (a: SearchRow, b: SearchRow) => (a.vid < b.vid ? -1 : a.vid > b.vid ? 1 : 0);
        expect(staged).toHaveLength(250);
        expect(staged.sort(byVid)).toEqual(loaded.sort(byVid));
      });

      it('is saved where a server on the same data directory looks, and a running server takes it', async () => {
        const holder = new SearchIndexHolder(server);
        const stopFollowing = server.followExternalImports(50);
        try {
          await holder.get();
          const before = holder.generation;
          appendRows(path.join(input, 'companies.csv'), [
            companyRow({ vid: 'late-1', name: 'Quillfeather Tooling GmbH' }),
          ]);
          await importDirectory(importer, input, { workDir: dir, log });
          const saved = importer.derivedDataFile(SEARCH_INDEX_NAME)!;
          expect(fs.existsSync(saved.file)).toBe(true);
          expect(fs.readdirSync(dir).filter((f) => f.endsWith('.import'))).toEqual([]);
          const fromImport = CompanySearchIndex.load(saved.file, saved.key)!;
          const fromStore = await CompanySearchIndex.build(importer);
          expect(fromImport.size).toBe(251);
          const names: string[] = [];
          await importer.scanSearchRows((rows) => void names.push(...rows.map((r) => r.name)));
          for (const name of [...names.slice(0, 80), ...names.slice(80, 160).map((n) => n.split(' ')[0]!)]) {
            expect(fromImport.search(crit(name))).toEqual(fromStore.search(crit(name)));
            expect(fromImport.search(crit(name, 'similarity'))).toEqual(
              fromStore.search(crit(name, 'similarity')),
            );
          }

          // The server notices the new generation and loads the import's index instead of reading Neo4j.
          const scan = jest.spyOn(server, 'scanSearchRows');
          try {
            const deadline = Date.now() + 10_000;
            while (server.generation === before && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 25));
            const index = await holder.rebuild();
            expect(scan).not.toHaveBeenCalled();
            expect(index.search(crit('Quillfeather Tooling')).hits[0]!.vid).toBe('late-1');
          } finally {
            scan.mockRestore();
          }
        } finally {
          stopFollowing();
          await holder.close();
        }
      });

      it('leaves the saved index as it was when the load fails', async () => {
        const saved = importer.derivedDataFile(SEARCH_INDEX_NAME)!;
        const bytes = fs.readFileSync(saved.file);
        const staging = path.join(dir, 'staging-broken');
        await stageImport(input, staging, {});
        fs.rmSync(path.join(staging, 'CLUSTER_SUPPLIES.tsv'));
        const generation = importer.generation;
        let keyed = '';
        await expect(
          importer.replaceAll(staging, undefined, (_staging, derivedFile) => {
            const { file, key } = derivedFile(SEARCH_INDEX_NAME);
            keyed = key;
            fs.writeFileSync(file, 'written before the load failed');
            return Promise.resolve();
          }),
        ).rejects.toThrow();
        // Written under the key the data would have had, not the one it keeps.
        expect(keyed).not.toBe('');
        expect(keyed).not.toBe(saved.key);
        expect(importer.generation).toBe(generation);
        expect(fs.readdirSync(dir).filter((f) => f.endsWith('.import'))).toEqual([]);
        expect(fs.readFileSync(saved.file).equals(bytes)).toBe(true);
        expect(lines.filter((l) => l.msg?.startsWith('another change'))).toEqual([]);
      });

      it('puts nothing in place when another change raised the generation during the load', async () => {
        const saved = importer.derivedDataFile(SEARCH_INDEX_NAME)!;
        const bytes = fs.readFileSync(saved.file);
        const staging = path.join(dir, 'staging-raced');
        await stageImport(input, staging, {});
        const before = lines.length;
        await importer.replaceAll(staging, undefined, async (_staging, derivedFile) => {
          fs.writeFileSync(derivedFile(SEARCH_INDEX_NAME).file, 'derived from the import alone');
          // A seed run by another process while the import loads.
          await server.runScript(['MATCH (m:TiergraphMeta) RETURN count(m)']);
        });
        expect(fs.readdirSync(dir).filter((f) => f.endsWith('.import'))).toEqual([]);
        expect(fs.readFileSync(saved.file).equals(bytes)).toBe(true);
        expect(lines.slice(before).map((l) => l.msg)).toContain(
          'another change raised the generation during the import: the servers derive its data afresh',
        );
      });
    });

    describe('the point-read file written beside the load', () => {
      let dir: string;
      let input: string;
      let importer: Neo4jGraphStore;
      const { log, lines } = recordingLogger();
      log.level = 'info';
      beforeAll(async () => {
        dir = tempDir('neo4j-import-points');
        input = path.join(dir, 'dataset');
        await generateDataset({ companies: 200, seed: 12, outDir: input });
        importer = await openNeo4jStore(target, {
          derivedDir: dir,
          importBatchSize: 500,
          pointFileAtImport: true,
          logger: log,
        });
      });
      afterAll(async () => {
        await importer?.close();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      it('holds every profile and edge as Neo4j gives it, and a server opens it instead of reading them', async () => {
        await importDirectory(importer, input, { workDir: dir, log });
        const saved = importer.derivedDataFile('point-reads')!;
        expect(fs.readdirSync(dir).filter((f) => f.endsWith('.import'))).toEqual([]);
        const file = await PointFile.open(saved.file, saved.key);
        expect(file).not.toBeNull();
        const vids = csvColumn(path.join(input, 'companies.csv'), 'vid');
        const edgeIds = csvColumn(path.join(input, 'relationships.csv'), 'edge_id');
        try {
          expect(file!.counts).toEqual({ companies: 200, edges: edgeIds.length });
          // The importer reads nothing from the file: every answer below is Neo4j's.
          for (const vid of vids) expect(file!.company(vid)).toEqual(await importer.getCompany(vid));
          for (const id of edgeIds) expect(file!.edge(id)).toEqual(await importer.getEdge(id));
        } finally {
          file!.close();
        }
        const before = lines.length;
        const server = await openNeo4jStore(target, { derivedDir: dir, pointFile: 'wait', logger: log });
        try {
          expect(await server.getCompany(vids[0]!)).toEqual(await importer.getCompany(vids[0]!));
          const msgs = lines.slice(before).map((l) => l.msg);
          expect(msgs).toContain('point-read file opened');
          expect(msgs).not.toContain('point-read file written');
        } finally {
          await server.close();
        }
        // The edges are the staging's Edge file, kept beside the point-read file; a second import
        // replaces both, and the first one's rows go with the file they belonged to.
        const apart = () => fs.readdirSync(dir).filter((f) => /\.point-reads\.(import\.)?edges-/.test(f));
        expect(apart()).toHaveLength(1);
        const first = apart()[0];
        await importDirectory(importer, input, { workDir: dir, log });
        expect(apart()).toHaveLength(1);
        expect(apart()[0]).not.toBe(first);
        const again = importer.derivedDataFile('point-reads')!;
        const reopened = (await PointFile.open(again.file, again.key))!;
        try {
          expect(reopened.edge(edgeIds[0]!)).toEqual(await importer.getEdge(edgeIds[0]!));
        } finally {
          reopened.close();
        }
      });

      it('is opened at once by a server, without waiting for its read of the walk memory', async () => {
        // The walk memory's read of every relationship takes minutes at 1M; a saved file needs none of it.
        let release = () => undefined as void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const walkRead = jest
          .spyOn(
            Neo4jGraphStore.prototype as unknown as { readWalksMemory: () => Promise<null> },
            'readWalksMemory',
          )
          .mockImplementation(async () => {
            await gate;
            return null;
          });
        const server = await openNeo4jStore(target, {
          derivedDir: dir,
          walkMemory: 'background',
          pointFile: 'background',
        });
        try {
          const deadline = Date.now() + 10_000;
          while (server.derivedData().point_reads !== 'ready' && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 25));
          expect(server.derivedData()).toMatchObject({ point_reads: 'ready', walk_memory: 'building' });
          expect(walkRead).toHaveBeenCalled();
        } finally {
          release();
          walkRead.mockRestore();
          await server.close();
        }
      });
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

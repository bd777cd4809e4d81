import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { CompanySearchIndex } from '../../src/search/company-search';
import { SEARCH_INDEX_NAME } from '../../src/search/search-index-holder';
import type { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import { runCli } from '../support/cli';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';
import {
  NEO4J_HINT,
  NEO4J_LAUNCHER_HINT,
  dumpNeo4j,
  emptyNeo4j,
  freePort,
  neo4jAdminImport,
  neo4jAvailability,
  neo4jLauncher,
  openNeo4jStore,
  serveNeo4jData,
  startNeo4j,
} from '../support/neo4j';
import type { Neo4jTarget } from '../support/neo4j';
import { skipVisibly } from '../support/services';

/**
 * Runs `tiergraph` from the sources; STORE=neo4j with no server behind NEO4J_URI (by default a port
 * nothing listens on): writing the files must not need one.
 */
function cli(dataDir: string, args: string[], uri = 'bolt://127.0.0.1:9') {
  const env = { DATA_DIR: dataDir, STORE: 'neo4j', NEO4J_URI: uri, LOG_LEVEL: 'warn' };
  return runCli(args, env, 120_000);
}

/** Files the Neo4j harness writes into the temporary directory it is given (its logging configuration). */
function strayNeo4jFiles(): string[] {
  return fs
    .readdirSync(os.tmpdir())
    .filter((f) => /^log4j-\d+\.xml$/.test(f))
    .map((f) => path.join(os.tmpdir(), f));
}

/** A file's text, or '' once another process has removed it. */
function textOf(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

const hint =
  neo4jAvailability() === null ? NEO4J_HINT : neo4jLauncher() === null ? NEO4J_LAUNCHER_HINT : null;

if (hint !== null) {
  skipVisibly(describe.skip, 'bulk-load files for neo4j-admin', hint, () => {
    it('loads', () => undefined);
  });
} else {
  describe('bulk-load files for neo4j-admin', () => {
    jest.setTimeout(300_000);
    const launcher = neo4jLauncher()!;
    let work: string;
    let shared: Neo4jTarget;
    let online: Neo4jGraphStore | undefined;
    let bulk: Neo4jTarget | undefined;
    let bulkStore: Neo4jGraphStore | undefined;
    let dataset: string;

    beforeAll(async () => {
      work = tempDir('neo4j-admin-files');
      dataset = path.join(work, 'dataset');
      await generateDataset({ companies: 400, seed: 11, outDir: dataset });
      shared = await startNeo4j();
      await emptyNeo4j(shared);
    });
    afterAll(async () => {
      await bulkStore?.close();
      await bulk?.stop();
      await online?.close();
      if (shared) await emptyNeo4j(shared);
      await shared?.stop();
      fs.rmSync(work, { recursive: true, force: true });
    });

    it('gives the graph that the online import writes, and a server that answers from it', async () => {
      const files = path.join(work, 'files');
      // Written for the server that will serve the loaded data, which is not there yet.
      const port = await freePort();
      const dataDir = path.join(work, 'data');
      const written = cli(
        dataDir,
        ['import', dataset, '--neo4j-admin-files', files],
        `bolt://127.0.0.1:${port}`,
      );
      if (written.status !== 0) throw new Error(`tiergraph import failed:\n${written.err}`);
      expect(written.status).toBe(0);
      expect(written.out).toMatch(/neo4j-admin database import full neo4j @import\.args/);
      expect(written.out).toMatch(/\n {2}Company\.tsv: 400 nodes\n/);
      expect(written.out).toMatch(/\n {2}TiergraphMeta\.tsv: 1 node\n/);
      expect(written.out).toMatch(
        new RegExp(
          `Saved in ${dataDir} .*: neo4j-[0-9a-f]{16}\\.search-index, neo4j-[0-9a-f]{16}\\.point-reads\\.\\n`,
        ),
      );

      const home = path.join(work, 'home');
      const loaded = neo4jAdminImport(launcher, files, home);
      if (loaded.status !== 0) throw new Error(`neo4j-admin import failed:\n${loaded.output}`);
      expect(loaded.output).toMatch(/IMPORT DONE/);
      const strayBefore = new Set(strayNeo4jFiles());
      bulk = await serveNeo4jData(launcher, path.join(home, 'data'), path.join(work, 'server'), port);
      // Nothing of this server's is left in the system's temporary directory.
      const strays = strayNeo4jFiles().filter((f) => !strayBefore.has(f) && textOf(f).includes(work));
      expect(strays).toEqual([]);

      online = await openNeo4jStore(shared);
      await importDirectory(online, dataset, { workDir: path.join(work, 'staging') });

      const expected = await dumpNeo4j(shared, true);
      expect(expected.length).toBeGreaterThan(1000);
      expect(await dumpNeo4j(bulk, true)).toEqual(expected);

      // The first open creates the schema on the loaded data and answers as the other: profiles from
      // the point-read file saved beside the bulk-load files, which it opens instead of writing.
      const { log, lines: logged } = recordingLogger('info');
      bulkStore = await openNeo4jStore(bulk, { derivedDir: dataDir, pointFile: 'wait', logger: log });
      await expect(bulkStore.stats()).resolves.toEqual(await online.stats());
      const index = bulkStore.derivedDataFile(SEARCH_INDEX_NAME)!;
      expect(CompanySearchIndex.load(index.file, index.key)?.size).toBe(400);
      const lines = fs.readFileSync(path.join(dataset, 'companies.csv'), 'utf8').split('\n');
      const at = lines[0]!.split(',').indexOf('vid');
      const vids = lines.slice(1, 6).map((l) => l.split(',')[at]!);
      const q = { minConfidence: 0, evidenceFrom: null, limit: 50, offset: 0 };
      for (const vid of vids) {
        const company = await online.getCompany(vid);
        expect(company).not.toBeNull();
        await expect(bulkStore.getCompany(vid)).resolves.toEqual(company);
        await expect(bulkStore.listRelationships(vid, 'suppliers', 'cluster', q)).resolves.toEqual(
          await online.listRelationships(vid, 'suppliers', 'cluster', q),
        );
      }
      const msgs = logged.map((l) => l.msg);
      expect(msgs).toContain('point-read file opened');
      expect(msgs).not.toContain('point-read file written');
    });

    it('refuses a directory that is not empty, and a dry run', () => {
      const full = path.join(work, 'full');
      fs.mkdirSync(full);
      fs.writeFileSync(path.join(full, 'keep.txt'), 'mine');
      const refused = cli(path.join(work, 'data2'), ['import', dataset, '--neo4j-admin-files', full]);
      // Arguments refused: the status of bad settings.
      expect(refused.status).toBe(2);
      expect(refused.err).toMatch(/is not empty/);
      expect(fs.readdirSync(full)).toEqual(['keep.txt']);
      const dry = cli(path.join(work, 'data2'), [
        'import',
        dataset,
        '--dry-run',
        '--neo4j-admin-files',
        path.join(work, 'x'),
      ]);
      expect(dry.status).toBe(2);
      expect(dry.err).toMatch(/do not go together/);
    });
  });
}

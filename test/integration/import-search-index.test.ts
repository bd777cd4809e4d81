import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { stageImport } from '../../src/import/stage';
import type { SearchRow } from '../../src/domain/search-row';
import { CompanySearchIndex } from '../../src/search/company-search';
import { SEARCH_INDEX_NAME, SearchIndexHolder } from '../../src/search/search-index-holder';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { scanStagedSearchRows } from '../../src/store/staged-search-rows';
import { companyRow, toCsv } from '../support/factories';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

const byVid = (a: SearchRow, b: SearchRow) => (a.vid < b.vid ? -1 : a.vid > b.vid ? 1 : 0);

async function rowsOf(scan: (onBatch: (rows: SearchRow[]) => void) => Promise<void>): Promise<SearchRow[]> {
  const rows: SearchRow[] = [];
  await scan((batch) => void rows.push(...batch));
  return rows.sort(byVid);
}

/**
 * An import builds the search index from its staging files while the store loads them and saves it
 * beside the new graph, so that the first start after an import loads it instead of reading every
 * company back and indexing it.
 */
describe('the search index built by an import', () => {
  let dir: string;
  let input: string;
  let store: EmbeddedGraphStore;
  const { log, lines } = recordingLogger();

  beforeAll(async () => {
    dir = tempDir('import-index');
    input = path.join(dir, 'dataset');
    await generateDataset({ companies: 600, seed: 5, outDir: input });
    // Values the staging encodes: aliases with list syntax and percent signs, no country.
    const companies = path.join(input, 'companies.csv');
    const columns = fs.readFileSync(companies, 'utf8').split('\n', 1)[0]!.split(',');
    const odd = [
      companyRow({ vid: 'odd-1', name: 'Odd, Names & Co', aliases: 'A,B [x] | 100% "Odd" | {y}' }),
      companyRow({ vid: 'odd-2', name: 'Plain Ltd', domiciled_country: '' }),
    ].map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? ''])));
    fs.appendFileSync(companies, toCsv(odd).split('\n').slice(1).join('\n'));
    store = new EmbeddedGraphStore({
      dir: path.join(dir, 'graph'),
      connections: 1,
      bufferPoolMb: 128,
      logger: log,
    });
    await store.open();
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads from the staging files the rows the store gives once they are loaded', async () => {
    const staging = path.join(dir, 'staging-rows');
    await stageImport(input, staging, {});
    await store.replaceAll(staging);
    const staged = await rowsOf((onBatch) => scanStagedSearchRows(staging, onBatch, 64));
    const loaded = await rowsOf((onBatch) => store.scanSearchRows(onBatch));
    expect(staged).toHaveLength(602);
    expect(staged.find((r) => r.vid === 'odd-1')!.aliases).toEqual(['A,B [x]', '100% "Odd"', '{y}']);
    expect(staged.find((r) => r.vid === 'odd-2')!.country).toBeNull();
    expect(staged.some((r) => r.isClusterParent)).toBe(true);
    expect(staged.some((r) => !r.searchedByDefault)).toBe(true);
    expect(staged).toEqual(loaded);
  });

  it('saves the index the store would give, where a server looks for it', async () => {
    await importDirectory(store, input, { workDir: dir, log });
    const saved = store.derivedDataFile(SEARCH_INDEX_NAME)!;
    expect(fs.existsSync(saved.file)).toBe(true);
    const fromImport = CompanySearchIndex.load(saved.file, saved.key)!;
    const fromStore = await CompanySearchIndex.build(store);
    // The engine gives the companies back in another order than they were loaded, so the companies are
    // numbered otherwise: the answers, which do not depend on that order, are the same.
    const names = (await rowsOf((onBatch) => store.scanSearchRows(onBatch))).map((r) => r.name);
    const queries = [
      ...names.slice(0, 150),
      ...names.slice(150, 300).map((n) => n.split(' ')[0]!),
      ...names.slice(300, 400).map((n) => n.slice(0, 5)),
      'Odd Names',
    ];
    for (const name of queries) {
      for (const sort of ['relevance', 'similarity'] as const) {
        const c = { name, sort, limit: 10, offset: 0, minSimilarity: 0.3, includeSubsidiaries: false };
        expect(fromImport.search(c)).toEqual(fromStore.search(c));
      }
      expect(fromImport.suggest(name.slice(0, 4), 5, false)).toEqual(
        fromStore.suggest(name.slice(0, 4), 5, false),
      );
    }
    expect(
      fromImport.search({
        name: 'Odd Names',
        limit: 1,
        offset: 0,
        minSimilarity: 0.3,
        includeSubsidiaries: false,
      }).hits[0]!.vid,
    ).toBe('odd-1');

    const scan = jest.spyOn(store, 'scanSearchRows');
    try {
      const holder = new SearchIndexHolder(store);
      const index = await holder.get();
      expect(scan).not.toHaveBeenCalled();
      expect(index.size).toBe(602);
      expect(
        index.search({ name: 'Plain', limit: 1, offset: 0, minSimilarity: 0.3, includeSubsidiaries: true })
          .hits[0]!.vid,
      ).toBe('odd-2');
      await holder.close();
    } finally {
      scan.mockRestore();
    }
  });

  it('imports without it when asked to, and the server builds it then', async () => {
    await importDirectory(store, input, { workDir: dir, searchIndex: false });
    expect(fs.existsSync(store.derivedDataFile(SEARCH_INDEX_NAME)!.file)).toBe(false);
  });

  it('imports all the same when the index fails, and says so', async () => {
    const staging = path.join(dir, 'staging-failing');
    await stageImport(input, staging, {});
    const before = lines.length;
    await store.replaceAll(staging, undefined, () => Promise.reject(new Error('no room left')));
    expect((await store.stats()).companies).toBe(602);
    expect(fs.existsSync(store.derivedDataFile(SEARCH_INDEX_NAME)!.file)).toBe(false);
    expect(lines.slice(before).map((l) => l.msg)).toContain(
      'could not prepare derived data while loading; it is derived later',
    );
  });

  it('stops the work alongside when the load fails, and leaves nothing of the new graph', async () => {
    const staging = path.join(dir, 'staging-broken');
    await stageImport(input, staging, {});
    // A relationship to a company the staging does not hold: the engine refuses the load.
    const supplies = path.join(staging, 'SUPPLIES.tsv');
    fs.appendFileSync(supplies, 'no-such-company\tno-such-either\n');
    const graphDir = path.join(dir, 'graph');
    const files = fs.readdirSync(graphDir).sort();
    let aborted = false;
    await expect(
      store.replaceAll(staging, undefined, (_staging, _file, signal) => {
        return new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          }),
        );
      }),
    ).rejects.toThrow();
    expect(aborted).toBe(true);
    expect(fs.readdirSync(graphDir).sort()).toEqual(files);
    expect((await store.stats()).companies).toBe(602);
  });
});

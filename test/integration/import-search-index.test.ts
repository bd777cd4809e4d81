import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { stageImport } from '../../src/import/stage';
import type { SearchRow } from '../../src/domain/search-row';
import type { CompanyCountColumns } from '../../src/import/stage-result';
import * as buildThread from '../../src/search/build-thread';
import { feedSearchIndex } from '../../src/search/build-thread';
import type { FedSearchIndex } from '../../src/search/build-thread';
import { CompanySearchIndex } from '../../src/search/company-search';
import { searchIndexAlongside } from '../../src/search/staged-index';
import { SEARCH_INDEX_NAME, SearchIndexHolder } from '../../src/search/search-index-holder';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import {
  decodeStagedCompanyLines,
  decodeStagedNames,
  scanStagedSearchRows,
} from '../../src/store/staged-search-rows';
import { appendRows, companyRow } from '../support/factories';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';
import { isExport, refuseEngineExports } from '../support/engine-exports';

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
    appendRows(path.join(input, 'companies.csv'), [
      companyRow({ vid: 'odd-1', name: 'Odd, Names & Co', aliases: 'A,B [x] | 100% "Odd" | {y}' }),
      companyRow({ vid: 'odd-2', name: 'Plain Ltd', domiciled_country: '' }),
    ]);
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

  it('gives through the file the engine writes the rows it gives range by range', async () => {
    // The store's rows come through a file the engine writes (see EmbeddedGraphStore.scanSearchRows);
    // when it cannot write one, they are read range by range.
    const staging = path.join(dir, 'staging-export');
    await stageImport(input, staging, {});
    await store.replaceAll(staging);
    const exported = await rowsOf((onBatch) => store.scanSearchRows(onBatch));
    const refused = refuseEngineExports('refused here');
    let ranged: SearchRow[];
    let refusedCopies: number;
    try {
      ranged = await rowsOf((onBatch) => store.scanSearchRows(onBatch));
      refusedCopies = refused.mock.calls.filter(([text]) => isExport(text)).length;
    } finally {
      refused.mockRestore();
    }
    expect(refusedCopies).toBe(1);
    expect(exported).toHaveLength(602);
    expect(exported.some((r) => r.isClusterParent)).toBe(true);
    expect(exported.some((r) => !r.searchedByDefault)).toBe(true);
    expect(exported).toEqual(ranged);
  });

  it('hands over every Company row before the relationships are read, then their counts', async () => {
    const staging = path.join(dir, 'staging-sink');
    const lines: string[] = [];
    const order: string[] = [];
    let counts: CompanyCountColumns | null = null;
    await stageImport(input, staging, {
      companies: {
        lines: (text) => {
          order.push('lines');
          lines.push(...text.toString('utf8').split('\n').slice(0, -1));
        },
        counts: (c) => {
          order.push('counts');
          counts = c;
        },
      },
      onProgress: (p) => {
        if (p.file === 'relationships.csv' && order.at(-1) !== 'relationships') order.push('relationships');
      },
    });
    expect(order[0]).toBe('lines');
    expect(order.indexOf('relationships')).toBeGreaterThan(order.lastIndexOf('lines'));
    expect(order.at(-1)).toBe('counts');
    // The staging file's rows, in its order, but for the four count columns, which come with the counts.
    const file = fs.readFileSync(path.join(staging, 'Company.tsv'), 'utf8').split('\n').slice(0, -1);
    const columns = file[0]!.split('\t');
    const at = [
      'count_suppliers',
      'count_customers',
      'count_supplier_evidence',
      'count_customer_evidence',
    ].map((c) => columns.indexOf(c));
    expect(lines).toHaveLength(602);
    const c = counts as unknown as CompanyCountColumns;
    const got = [c.suppliers, c.customers, c.supplierEvidence, c.customerEvidence];
    file.slice(1).forEach((row, i) => {
      const fields = row.split('\t');
      const fed = lines[i]!.split('\t');
      at.forEach((col, k) => {
        expect(fed[col]).toBe('');
        expect(String(got[k]![i])).toBe(fields[col]);
        fed[col] = fields[col]!;
      });
      expect(fed).toEqual(fields);
    });
    expect(c.suppliers.some((n) => n > 0) && c.supplierEvidence.some((n) => n > 0)).toBe(true);
  });

  it('hands over the names of every company while companies.csv is read, as its line will hold them', async () => {
    const staging = path.join(dir, 'staging-names');
    const names: string[] = [];
    const lines: string[] = [];
    const order: string[] = [];
    await stageImport(input, staging, {
      companies: {
        names: (text) => {
          order.push('names');
          names.push(text.toString('utf8'));
        },
        lines: (text) => void lines.push(text.toString('utf8')),
        counts: () => undefined,
      },
      onProgress: (p) => {
        if (p.file !== undefined && order.at(-1) !== p.file) order.push(p.file);
      },
    });
    // Before the next file is read.
    expect(order.indexOf('names')).toBeGreaterThan(order.indexOf('companies.csv'));
    expect(order.indexOf('names')).toBeLessThan(order.indexOf('clusters.csv'));
    const given = decodeStagedNames(names.join(''));
    const rows = decodeStagedCompanyLines(lines.join(''));
    expect(given).toHaveLength(602);
    expect(given).toEqual(rows.map((r) => ({ name: r.name, aliases: r.aliases })));
    expect(given.find((n) => n.name === 'Odd, Names & Co')!.aliases).toEqual([
      'A,B [x]',
      '100% "Odd"',
      '{y}',
    ]);
  });

  it('builds the index from the rows it hands over: the index of the staging file, byte for byte', async () => {
    const staging = path.join(dir, 'staging-fed');
    const fed = (await feedSearchIndex())!;
    await stageImport(input, staging, { companies: fed });
    const saved = await fed.save(path.join(dir, 'fed.index'), 'k');
    // The build is over once saved.
    await expect(fed.save(path.join(dir, 'fed-again.index'), 'k')).rejects.toThrow();
    const fromFile = await CompanySearchIndex.build({
      scanSearchRows: (onBatch) => scanStagedSearchRows(staging, onBatch, 64),
    });
    expect(saved.companies).toBe(fromFile.size);
    await fromFile.save(path.join(dir, 'file.index'), 'k');
    expect(
      fs.readFileSync(path.join(dir, 'fed.index')).equals(fs.readFileSync(path.join(dir, 'file.index'))),
    ).toBe(true);
  });

  it('builds the index from the staging file when the one fed while staging failed, and says so', async () => {
    const staging = path.join(dir, 'staging-fed-failed');
    await stageImport(input, staging, {});
    const failed: FedSearchIndex = {
      names: () => undefined,
      lines: () => undefined,
      readAll: () => undefined,
      allLines: () => undefined,
      counts: () => undefined,
      save: () => Promise.reject(new Error('thread gone')),
      stop: () => undefined,
    };
    const before = lines.length;
    const file = path.join(dir, 'fallback.index');
    await searchIndexAlongside(log, failed)(
      staging,
      () => ({ file, key: 'k' }),
      new AbortController().signal,
    );
    expect(lines.slice(before).map((l) => l.msg)).toContain(
      'search index fed by the staging failed; building it from the staging files',
    );
    const fromFile = await CompanySearchIndex.build({
      scanSearchRows: (onBatch) => scanStagedSearchRows(staging, onBatch, 64),
    });
    await fromFile.save(path.join(dir, 'file-2.index'), 'k');
    expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'file-2.index')))).toBe(true);
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

  it('builds it from the staging files during the load where it cannot be fed while staging', async () => {
    const feed = jest.spyOn(buildThread, 'feedSearchIndex').mockResolvedValue(null);
    try {
      await importDirectory(store, input, { workDir: dir, log });
      expect(feed).toHaveBeenCalledTimes(1);
    } finally {
      feed.mockRestore();
    }
    const saved = store.derivedDataFile(SEARCH_INDEX_NAME)!;
    const fromImport = CompanySearchIndex.load(saved.file, saved.key)!;
    expect(fromImport.size).toBe(602);
    const staging = path.join(dir, 'staging-unfed');
    await stageImport(input, staging, {});
    const fromFile = await CompanySearchIndex.build({
      scanSearchRows: (onBatch) => scanStagedSearchRows(staging, onBatch, 64),
    });
    await fromFile.save(path.join(dir, 'unfed.index'), saved.key);
    expect(fs.readFileSync(saved.file).equals(fs.readFileSync(path.join(dir, 'unfed.index')))).toBe(true);
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

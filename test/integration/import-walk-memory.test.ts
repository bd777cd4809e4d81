import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { stageImport } from '../../src/import/stage';
import { stagedWalkMemory } from '../../src/store/staged-walk-memory';
import * as stringHash from '../../src/store/string-hash';
import { stagingFile } from '../../src/store/tables';
import type { TableName } from '../../src/store/tables';
import type { Columns, WalkMemory } from '../../src/store/walk-memory';
import { appendRows, companyRow, csvColumn, relationshipRow } from '../support/factories';
import { refuseEngineExports } from '../support/engine-exports';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

/**
 * An import builds the tier walks' memory from its staging files while the engine loads them, so
 * that a server of the new data loads it instead of reading every relationship back from the
 * engine (about a minute at a million companies).
 */
describe('the walk memory written by an import', () => {
  let dir: string;
  let input: string;
  const { log, lines } = recordingLogger('info');
  const graph = () => path.join(dir, 'graph');
  const store = (options: Partial<ConstructorParameters<typeof EmbeddedGraphStore>[0]> = {}) =>
    new EmbeddedGraphStore({ dir: graph(), connections: 1, bufferPoolMb: 128, logger: log, ...options });

  beforeAll(async () => {
    dir = tempDir('import-walk-memory');
    input = path.join(dir, 'dataset');
    await generateDataset({ companies: 400, seed: 7, outDir: input });
    const vids = csvColumn(path.join(input, 'companies.csv'), 'vid');
    // Values the staging encodes: list syntax in a name, no country, no industry.
    appendRows(path.join(input, 'companies.csv'), [
      companyRow({ vid: 'odd-1', name: 'Odd, Names & Co', aliases: 'A,B [x] | 100% "Odd"' }),
      companyRow({ vid: 'odd-2', name: 'Plain Ltd', domiciled_country: '', industry: '' }),
    ]);
    // Relationship dates with a time of day, with milliseconds, and none.
    appendRows(path.join(input, 'relationships.csv'), [
      relationshipRow('odd-1', 'odd-2', { latest_edge_date: '2021-03-04T10:20:30Z', hs_codes: '8471' }),
      relationshipRow('odd-2', 'odd-1', { latest_edge_date: '2021-03-04T23:59:59.250Z', status_code: 3 }),
      relationshipRow('odd-1', vids[0]!, { confidence_score: 0.25 }),
      // Scores read from their digits and one with more digits than a double holds exactly.
      relationshipRow(vids[1]!, 'odd-1', { confidence_score: 0.1 }),
      relationshipRow(vids[2]!, 'odd-1', { confidence_score: 1 }),
      relationshipRow(vids[3]!, 'odd-1', { confidence_score: 0.30000000000000004 }),
      // Scores a text of six decimals would not give back, down to the smallest double.
      relationshipRow(vids[4]!, 'odd-1', { confidence_score: '0.0000001234567' }),
      relationshipRow(vids[5]!, 'odd-1', { confidence_score: '5e-324' }),
    ]);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * The memory a serving store holds once it has read or loaded it, with what its log said and how
   * many range queries of relationships it ran; `refused`: the engine cannot write files.
   */
  async function served(
    refused = false,
  ): Promise<{ memory: WalkMemory; msgs: (string | undefined)[]; ranges: number }> {
    const before = lines.length;
    const serving = store({ walkMemory: 'wait' });
    await serving.open();
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const refusing = refused ? refuseEngineExports('IO exception: No space left on device') : null;
    try {
      serving.prepare();
      const read = (
        serving as unknown as { walksMemory(wait: boolean): Promise<WalkMemory | null> }
      ).walksMemory(true);
      const memory = await read;
      if (!memory) throw new Error('no walk memory held');
      // A memory read from the engine is saved on the side; let that end before the store closes.
      await (serving as unknown as { memorySave?: Promise<void> }).memorySave;
      const ranges = stream.mock.calls.filter(([q]) => q.name === 'tierview/memory-relationships').length;
      return { memory, msgs: lines.slice(before).map((l) => l.msg), ranges };
    } finally {
      stream.mockRestore();
      refusing?.mockRestore();
      await serving.close();
    }
  }

  it('is the memory a server reads from the engine, value for value', async () => {
    const importer = store({ walkMemoryAtImport: true });
    await importer.open();
    let saved: { file: string; key: string };
    try {
      await importDirectory(importer, input, { workDir: dir, log });
      saved = importer.derivedDataFile('walk-memory')!;
      expect(fs.existsSync(saved.file)).toBe(true);
    } finally {
      await importer.close();
    }
    expect(lines.map((l) => l.msg)).toContain('walk memory of the import written');

    const fromImport = await served();
    expect(fromImport.msgs).toContain('relationships held in memory for tier walks: loaded');

    // Without the file, the server reads every relationship from the engine (and saves it anew):
    // through a file the engine writes in one scan, not range by range.
    fs.renameSync(saved.file, `${saved.file}.from-import`);
    const fromEngine = await served();
    expect(fromEngine.msgs).toContain('relationships held in memory for tier walks');
    expect(fromEngine.msgs).not.toContain('relationships held in memory for tier walks: loaded');
    expect(fromEngine.ranges).toBe(0);
    expect(fs.readdirSync(graph()).filter((f) => f.startsWith('relationship-rows'))).toEqual([]);

    // Range by range, with a warning, where the engine cannot write the file.
    fs.rmSync(saved.file);
    const fromRanges = await served(true);
    expect(fromRanges.ranges).toBeGreaterThan(0);
    expect(fromRanges.msgs).toContain(
      'relationships for the tier walks read range by range: the engine could not write them to a file',
    );

    const a = canonical(fromImport.memory);
    const b = canonical(fromEngine.memory);
    expect(a.companies.length).toBe(402);
    expect(a.relationships.length).toBeGreaterThan(1000);
    expect(a.companies).toEqual(b.companies);
    expect(a.relationships).toEqual(b.relationships);
    const r = canonical(fromRanges.memory);
    expect(r.companies).toEqual(a.companies);
    expect(r.relationships).toEqual(a.relationships);
    const scores = a.relationships.filter((x) => x[1] === 'odd-1').map((x) => x[3]);
    expect(scores).toEqual(expect.arrayContaining([0.0000001234567, 5e-324, 0.30000000000000004]));
    // The staged values that need mapping are among them.
    expect(a.companies.some((c) => c.includes('Odd, Names & Co'))).toBe(true);
    const times = a.relationships.filter((r) => r[0] === 'odd-1' || r[0] === 'odd-2').map((r) => r[2]);
    expect(times).toEqual(
      expect.arrayContaining([
        Date.parse('2021-03-04T10:20:30Z'),
        Date.parse('2021-03-04T23:59:59.250Z'),
        null,
      ]),
    );
  });

  it('hashes a supplier once for its run of lines, a company after the one before not at all', async () => {
    const staging = path.join(dir, 'staging-guesses');
    await stageImport(input, staging, {});
    const linesOf = (table: TableName) =>
      fs
        .readFileSync(path.join(staging, stagingFile(table)), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t'));
    // The engine gives the companies offsets in the order of their lines.
    const vids = linesOf('Company')
      .slice(1)
      .map((f) => f[0]!);
    const [header, ...rels] = linesOf('SUPPLIES');
    const column = (name: string) => rels.map((f) => f[header!.indexOf(name)]!);
    // How many lines differ in a column from the line before (the first line among them).
    const changes = (values: string[]) => values.filter((v, i) => i === 0 || v !== values[i - 1]).length;
    const hashed: string[] = [];
    const hashOfBytes = stringHash.hashOfBytes;
    const spy = jest.spyOn(stringHash, 'hashOfBytes').mockImplementation((bytes, start, end) => {
      hashed.push(bytes.toString('utf8', start, end));
      return hashOfBytes(bytes, start, end);
    });
    let memory: WalkMemory;
    try {
      memory = await stagedWalkMemory(staging, vids, new AbortController().signal);
    } finally {
      spy.mockRestore();
    }
    expect(memory.relationships).toBe(rels.length);
    const isVid = new Set(vids);
    // Each customer once a line; each supplier once for its run; no company of the Company lines.
    expect(changes(column('from'))).toBeLessThan(rels.length / 2);
    expect(hashed.filter((t) => isVid.has(t)).length).toBe(rels.length + changes(column('from')));
    // A list only where it differs from the same column's on the line before.
    expect(hashed.filter((t) => !isVid.has(t)).length).toBe(
      changes(column('hs_codes')) + changes(column('evidence_types')),
    );
  });

  it('is not written by a store that is not asked to', async () => {
    const plain = store();
    await plain.open();
    try {
      await importDirectory(plain, input, { workDir: dir, log });
      expect(fs.existsSync(plain.derivedDataFile('walk-memory')!.file)).toBe(false);
    } finally {
      await plain.close();
    }
  });
});

/**
 * Every company's held values by offset, and every relationship's, in one order: ids of interned
 * values (domiciles, industries, lists) and the relationships' order depend on the order rows were
 * read in, the values they stand for do not.
 */
function canonical(memory: WalkMemory): { companies: unknown[][]; relationships: unknown[][] } {
  const c = (memory as unknown as { c: Columns }).c;
  const companies = c.vids.map((vid, o) => [
    vid,
    c.names.get(o),
    c.legalNames.get(o),
    c.cids.get(o),
    c.countries[c.country[o]!],
    c.websites.get(o),
    c.isPublic[o],
    c.industries[c.industry[o]!],
    c.counts[2 * o],
    c.counts[2 * o + 1],
    c.parents[o],
    c.clusterFlags[o],
  ]);
  const relationships = Array.from(c.sup, (s, i) => [
    c.vids[s],
    c.vids[c.cus[i]!],
    Number.isNaN(c.time[i]) ? null : c.time[i],
    Number.isNaN(c.confidence[i]) ? null : c.confidence[i],
    c.status[i],
    c.lists[c.hs[i]!],
    c.lists[c.types[i]!],
    c.edgeText.toString('utf8', c.edgeStart[i], c.edgeStart[i + 1]),
  ]);
  relationships.sort((x, y) => (String(x[7]) < String(y[7]) ? -1 : String(x[7]) > String(y[7]) ? 1 : 0));
  return { companies, relationships };
}

import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { stageImport } from '../../src/import/stage';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { PointFile } from '../../src/store/point-file';
import { writeStagedPointFile } from '../../src/store/staged-point-file';
import { appendRows, companyRow, csvColumn } from '../support/factories';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

/**
 * An import writes the point-read file from its staging files while the engine loads them, so
 * that a server of the new data opens it instead of reading every profile and edge back from the
 * engine (minutes at a million companies).
 */
describe('the point-read file written by an import', () => {
  let dir: string;
  let input: string;
  let vids: string[];
  let edgeIds: string[];
  const { log, lines } = recordingLogger();
  log.level = 'info';
  const graph = () => path.join(dir, 'graph');

  beforeAll(async () => {
    dir = tempDir('import-points');
    input = path.join(dir, 'dataset');
    await generateDataset({ companies: 500, seed: 11, outDir: input });
    // Values the staging encodes: aliases with list syntax and percent signs, no country, no dates.
    const companies = path.join(input, 'companies.csv');
    appendRows(companies, [
      companyRow({ vid: 'odd-1', name: 'Odd, Names & Co', aliases: 'A,B [x] | 100% "Odd" | {y}' }),
      companyRow({ vid: 'odd-2', name: 'Plain Ltd', domiciled_country: '', incorporation_date: '' }),
    ]);
    vids = csvColumn(companies, 'vid');
    edgeIds = csvColumn(path.join(input, 'relationships.csv'), 'edge_id');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const store = (options: Partial<ConstructorParameters<typeof EmbeddedGraphStore>[0]> = {}) =>
    new EmbeddedGraphStore({ dir: graph(), connections: 1, bufferPoolMb: 128, logger: log, ...options });

  it('holds every profile and edge as the engine gives it once loaded', async () => {
    const importer = store({ pointFileAtImport: true, pointFileEdges: true });
    await importer.open();
    try {
      await importDirectory(importer, input, { workDir: dir, log });
      const saved = importer.derivedDataFile('point-reads')!;
      const file = PointFile.open(saved.file, `${saved.key}#companies+edges`);
      expect(file).not.toBeNull();
      try {
        expect(file!.counts).toEqual({ companies: 502, edges: edgeIds.length });
        // This store reads neither from the file: every answer below is the engine's.
        for (const vid of vids) expect(file!.company(vid)).toEqual(await importer.getCompany(vid));
        for (const id of edgeIds) expect(file!.edge(id)).toEqual(await importer.getEdge(id));
        expect(file!.company('odd-1')!.aliases).toEqual(['A,B [x]', '100% "Odd"', '{y}']);
        expect(file!.company('odd-2')!.domiciled_country).toBeNull();
        expect(edgeIds.some((id) => file!.edge(id)!.evidences.length > 1)).toBe(true);
        // The edges are the Edge staging file itself, kept beside the point-read file.
        const name = path.basename(saved.file);
        const apart = fs.readdirSync(path.dirname(saved.file)).filter((f) => f.startsWith(`${name}.edges-`));
        expect(apart).toHaveLength(1);
        expect(fs.readFileSync(path.join(path.dirname(saved.file), apart[0]!), 'utf8')).toMatch(/^edge_id\t/);
      } finally {
        file!.close();
      }
    } finally {
      await importer.close();
    }
    expect(lines.map((l) => l.msg)).toContain('point-read file of the import written');
  });

  it('is opened by a server of the data, not written again', async () => {
    const before = lines.length;
    const serving = store({ pointFile: 'wait', pointFileEdges: true });
    await serving.open();
    try {
      serving.prepare();
      expect(await serving.getCompany('odd-1')).toMatchObject({ name: 'Odd, Names & Co' });
      const msgs = lines.slice(before).map((l) => l.msg);
      expect(msgs).toContain('point-read file opened');
      expect(msgs).not.toContain('point-read file written');
    } finally {
      await serving.close();
    }
  });

  it('is not written by a store that is not asked to', async () => {
    const plain = store();
    await plain.open();
    try {
      await importDirectory(plain, input, { workDir: dir, log });
      const saved = plain.derivedDataFile('point-reads')!;
      expect(fs.existsSync(saved.file)).toBe(false);
    } finally {
      await plain.close();
    }
  });

  it('holds only the companies unless asked for the edges, and leaves nothing when aborted', async () => {
    const staging = path.join(dir, 'staging-kept');
    await stageImport(input, staging, {});
    const file = path.join(dir, 'companies.point-reads');
    const counts = await writeStagedPointFile(staging, file, 'k', false, new AbortController().signal);
    expect(counts).toEqual({ companies: 502, edges: 0 });
    const opened = PointFile.open(file, 'k')!;
    expect(opened.holdsEdges).toBe(false);
    expect(opened.company(vids[0]!)?.vid).toBe(vids[0]);
    opened.close();

    const aborted = new AbortController();
    aborted.abort(new Error('load failed'));
    const other = path.join(dir, 'aborted.point-reads');
    await expect(writeStagedPointFile(staging, other, 'k', true, aborted.signal)).rejects.toThrow(
      'load failed',
    );
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('aborted'))).toEqual([]);
  });

  it('reads the edges from the staging file when the keys of its lines are missing', async () => {
    const staging = path.join(dir, 'staging-keys');
    await stageImport(input, staging, {});
    const signal = new AbortController().signal;
    const kept = path.join(dir, 'kept.point-reads');
    await writeStagedPointFile(staging, kept, 'k', true, signal);
    fs.rmSync(path.join(staging, 'Edge.tsv.keys'));
    const copied = path.join(dir, 'copied.point-reads');
    await writeStagedPointFile(staging, copied, 'k', true, signal);
    const names = fs.readdirSync(dir);
    expect(names.filter((f) => f.startsWith('kept.point-reads.edges-'))).toHaveLength(1);
    expect(names.filter((f) => f.startsWith('copied.point-reads.'))).toEqual([]);
    const a = PointFile.open(kept, 'k')!;
    const b = PointFile.open(copied, 'k')!;
    try {
      for (const id of edgeIds) expect(a.edge(id)).toEqual(b.edge(id));
      expect(b.edge(edgeIds[0]!)?.edge_id).toBe(edgeIds[0]);
    } finally {
      a.close();
      b.close();
    }
  });
});

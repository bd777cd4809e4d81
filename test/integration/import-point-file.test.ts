import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { importDirectory } from '../../src/import/import-directory';
import { stageImport } from '../../src/import/stage';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { PointFile, PointFileWriter } from '../../src/store/point-file';
import {
  StagedProfileWriter,
  addExportedEdges,
  addStagedProfiles,
  writeStagedPointFile,
} from '../../src/store/staged-point-file';
import { fnv1a } from '../../src/store/string-hash';
import { toProfile } from '../../src/store/mappers';
import type { EdgeRecord } from '../../src/domain/model';
import { asLoaded, exactNumberOfBytes, stagedColumns, stagedRowDecoder } from '../../src/store/staging-file';
import { appendRows, companyRow, csvColumn, relationshipRow } from '../support/factories';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

const ODD_CONFIDENCES = [
  '0.30000000000000004',
  '0.1234567890123457',
  '0.0000001234567',
  '1',
  '5e-324',
  '2.2250738585072014e-308',
  '0.9999999999999999',
];

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
      // A time of day with milliseconds, and flags of each kind (none given: null).
      companyRow({
        vid: 'odd-3',
        name: 'Timed GmbH',
        incorporation_date: '2001-02-03T04:05:06.789Z',
        ipo_date: '2010-05-06T07:08:09Z',
        is_public: 'true',
        is_active: 'false',
      }),
    ]);
    // Confidences a text of six decimals would not give back, down to the smallest doubles.
    appendRows(
      path.join(input, 'relationships.csv'),
      ODD_CONFIDENCES.map((confidence_score, i) =>
        relationshipRow(`odd-${(i % 3) + 1}`, `odd-${((i + 1) % 3) + 1}`, {
          edge_id: `odd-e${i}`,
          confidence_score,
        }),
      ),
    );
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
      const file = await PointFile.open(saved.file, `${saved.key}#companies+edges`);
      expect(file).not.toBeNull();
      try {
        expect(file!.counts).toEqual({ companies: 503, edges: edgeIds.length });
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

  it('is opened at once, not after the walk memory is read from the engine', async () => {
    // After an import the walk memory is read through the engine (a minute at 1M); the file the
    // import wrote needs no engine read, and profiles and edges should not wait for that one.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const proto = EmbeddedGraphStore.prototype as unknown as {
      readWalksMemory: (generation: number) => Promise<unknown>;
    };
    const read = proto.readWalksMemory;
    const held = jest.spyOn(proto, 'readWalksMemory').mockImplementation(async function (this: unknown, g) {
      await gate;
      return read.call(this, g);
    });
    const serving = store({ pointFile: 'background', pointFileEdges: true, walkMemory: 'background' });
    await serving.open();
    try {
      serving.prepare();
      const deadline = Date.now() + 10_000;
      while (serving.derivedData().point_reads !== 'ready' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(serving.derivedData()).toMatchObject({ point_reads: 'ready', walk_memory: 'building' });
    } finally {
      release();
      held.mockRestore();
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

  it('when a server writes it, holds the profiles the engine gives, written from a file the engine writes', async () => {
    // The import of the test before wrote no point-read file: a server writes one. Its profiles come
    // through a file the engine writes in one scan (company/export-profiles), not range by range.
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const before = lines.length;
    const serving = store({ pointFile: 'wait', pointFileEdges: false });
    await serving.open();
    const fromFile = new Map<string, unknown>();
    try {
      serving.prepare();
      for (const vid of vids) fromFile.set(vid, await serving.getCompany(vid));
      expect(lines.slice(before).map((l) => l.msg)).toContain('point-read file written');
      expect(stream.mock.calls.filter(([q]) => q.name === 'company/profiles-range')).toHaveLength(0);
    } finally {
      stream.mockRestore();
      await serving.close();
    }
    expect(fs.readdirSync(graph()).filter((f) => f.startsWith('profile-rows'))).toEqual([]);
    const engine = store();
    await engine.open();
    try {
      for (const vid of vids) expect(fromFile.get(vid)).toEqual(await engine.getCompany(vid));
    } finally {
      await engine.close();
    }
    expect(fromFile.get('odd-3')).toMatchObject({
      incorporation_date: '2001-02-03T04:05:06.789Z',
      ipo_date: '2010-05-06T07:08:09.000Z',
      is_public: true,
      is_active: false,
      is_freight_forwarder: null,
    });
    expect(fromFile.get('odd-2')).toMatchObject({ domiciled_country: null, incorporation_date: null });
  });

  it('when a server writes it with the edges, holds the edges the engine gives, written from a file the engine writes', async () => {
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const before = lines.length;
    const serving = store({ pointFile: 'wait', pointFileEdges: true });
    await serving.open();
    const fromFile = new Map<string, unknown>();
    try {
      serving.prepare();
      for (const id of edgeIds) fromFile.set(id, await serving.getEdge(id));
      expect(lines.slice(before).map((l) => l.msg)).toContain('point-read file written');
      expect(stream.mock.calls.filter(([q]) => q.name === 'edge/range')).toHaveLength(0);
    } finally {
      stream.mockRestore();
      await serving.close();
    }
    expect(fs.readdirSync(graph()).filter((f) => f.startsWith('edge-rows'))).toEqual([]);
    const engine = store();
    await engine.open();
    try {
      for (const id of edgeIds) expect(fromFile.get(id)).toEqual(await engine.getEdge(id));
    } finally {
      await engine.close();
    }
    expect(ODD_CONFIDENCES.map((_, i) => (fromFile.get(`odd-e${i}`) as EdgeRecord).confidence_score)).toEqual(
      ODD_CONFIDENCES.map(Number),
    );
  });

  it('refuses a file of profiles in which the engine quoted a value', async () => {
    // A value holding a tab or a line break comes out of the engine's export quoted (with NEVER_STAGED),
    // and its line is then no longer one company: refused, not read askew.
    const columns = ['vid', ...stagedColumns('Company').filter((c) => c !== 'vid')];
    const file = path.join(dir, 'quoted.csv');
    const line = (vid: string, name: string) =>
      columns.map((c) => (c === 'vid' ? vid : c === 'name' ? name : '')).join('\t');
    fs.writeFileSync(
      file,
      `${columns.join('\t')}\n${line('q1', 'Plain')}\n${line('q2', '\u0001Tab\there\u0001')}\n`,
    );
    const writer = new PointFileWriter(path.join(dir, 'quoted.point-reads'));
    try {
      await expect(addStagedProfiles(writer, file, (header) => header)).rejects.toThrow(/quoted value/);
    } finally {
      writer.abort();
    }
  });

  it('refuses a file of edges in which the engine quoted a value or a line lacks fields', async () => {
    const columns = stagedColumns('Edge');
    const line = (id: string, hs = '') =>
      columns
        .map((c) => (c === 'edge_id' ? id : c === 'confidence_score' ? '1p0' : c === 'hs_codes' ? hs : ''))
        .join('\t');
    const header = columns.join('\t');
    for (const [name, body, refused] of [
      ['quoted', `${line('q1', '\u0001[1,2]\u0001')}\n`, /quoted value/],
      ['short', `${line('q1')}\nq2\t1p0\n${line('q3')}`, /line of 2 fields, not 11/],
    ] as const) {
      const file = path.join(dir, `${name}.csv`);
      fs.writeFileSync(file, `${header}\n${body}`);
      const writer = new PointFileWriter(path.join(dir, `${name}.point-reads`));
      try {
        await expect(addExportedEdges(writer, file)).rejects.toThrow(refused);
      } finally {
        writer.abort();
      }
    }
  });

  it('reads a number as the engine exports it exactly, m over 2^s, as the same double', () => {
    const exact = (text: string) => exactNumberOfBytes(Buffer.from(` ${text} `), 1, text.length + 1);
    expect(exact('2075258708292324608p61')).toBe(0.9);
    expect(exact('1152921504606846976p1134')).toBe(5e-324);
    expect(exact('0p60')).toBe(0);
    expect(exact('-1152921504606846976p61')).toBe(-0.5);
    expect(exact('1729382256910270464p-936')).toBe(2 ** 936 * 1729382256910270464);
    expect(() => exact('0.500000')).toThrow(/not a number as the engine's export writes it exactly/);
    for (const text of ['12p1.5', '12p', '12p 1', '12p0x10', 'p12'])
      expect(() => exact(text)).toThrow(/not a number as the engine's export writes it exactly/);
    // A staged DOUBLE reads either form; a staged INT64 only digits.
    expect(asLoaded('2075258708292324608p61', 'DOUBLE')).toBe(0.9);
    expect(asLoaded('0.9', 'DOUBLE')).toBe(0.9);
  });

  it('holds only the companies unless asked for the edges, and leaves nothing when aborted', async () => {
    const staging = path.join(dir, 'staging-kept');
    await stageImport(input, staging, {});
    const file = path.join(dir, 'companies.point-reads');
    const counts = await writeStagedPointFile(staging, file, 'k', false, new AbortController().signal);
    expect(counts).toEqual({ companies: 503, edges: 0 });
    const opened = (await PointFile.open(file, 'k'))!;
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

  it('finds the keys of the Edge lines by reading them where none were saved, and checks the header', async () => {
    const staging = path.join(dir, 'staging-keys');
    await stageImport(input, staging, {});
    const signal = new AbortController().signal;
    const saved = path.join(dir, 'saved.point-reads');
    await writeStagedPointFile(staging, saved, 'k', true, signal);
    fs.rmSync(path.join(staging, 'Edge.tsv.keys'));
    const found = path.join(dir, 'found.point-reads');
    await writeStagedPointFile(staging, found, 'k', true, signal);
    // Both keep the Edge staging file as their edges, and nothing else apart.
    const names = fs.readdirSync(dir);
    for (const file of ['saved', 'found']) {
      expect(names.filter((f) => f.startsWith(`${file}.point-reads.`))).toEqual([
        expect.stringMatching(new RegExp(`^${file}\\.point-reads\\.edges-`)),
      ]);
    }
    const a = (await PointFile.open(saved, 'k'))!;
    const b = (await PointFile.open(found, 'k'))!;
    try {
      // Warming reads the rows kept apart too.
      const bytes = names
        .filter((f) => f.startsWith('saved.point-reads'))
        .reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
      expect(a.bytes).toBe(bytes);
      expect(await a.warm()).toBe(bytes);
      expect(b.counts).toEqual({ companies: vids.length, edges: edgeIds.length });
      for (const id of edgeIds) expect(b.edge(id)).toEqual(a.edge(id));
      expect(b.edge(edgeIds[0]!)?.edge_id).toBe(edgeIds[0]);
    } finally {
      a.close();
      b.close();
    }

    // A staging file of other columns is refused, and nothing is left behind.
    const edgeFile = path.join(staging, 'Edge.tsv');
    const text = fs.readFileSync(edgeFile, 'utf8');
    fs.writeFileSync(edgeFile, text.replace(/^edge_id\tsupplier_id\t/, 'supplier_id\tedge_id\t'));
    await expect(
      writeStagedPointFile(staging, path.join(dir, 'other.point-reads'), 'k', true, signal),
    ).rejects.toThrow('staged Edge header is supplier_id,edge_id,');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('other.point-reads'))).toEqual([]);
  });

  it('writes each profile as the stores write them, straight from the staged line', async () => {
    const staging = path.join(dir, 'staging-profiles');
    await stageImport(input, staging, {});
    const columns = stagedColumns('Company');
    const decode = stagedRowDecoder('Company', columns);
    const profiles = new StagedProfileWriter(columns);
    const json = (line: string) => {
      const bytes = Buffer.from(line, 'utf8');
      const written = profiles.write(bytes, 0, bytes.length);
      return written && { text: written.json.toString('utf8', 0, written.length), hash: written.hash };
    };
    const expected = (line: string) => JSON.stringify(toProfile(decode(line.split('\t'))));
    const lines = fs.readFileSync(path.join(staging, 'Company.tsv'), 'utf8').split('\n').slice(1, -1);
    expect(lines).toHaveLength(vids.length);
    for (const line of lines) {
      const written = json(line)!;
      expect(written.text).toBe(expected(line));
      expect(written.hash).toBe(fnv1a(line.slice(0, line.indexOf('\t'))));
    }
    // Values of every kind, empty and not, some the staging would not write: mapped alike.
    const odd: string[] = columns.map((c) =>
      c.startsWith('count_') ? '7' : c.startsWith('is_') ? 'false' : c.endsWith('_date') ? '2024-02-29' : '',
    );
    const set = (column: string, value: string) => (odd[columns.indexOf(column)] = value);
    set('vid', 'odd-3é');
    set('name', 'Quote " and \\ back\u00e9 \u0001\b\f\r \u{1f600}');
    set('description', 'x');
    set('domains', '[a.example,b"x,,]');
    set('websites', '[,w.example]');
    set('hq_phone_number', '[]');
    set('aliases', '[A%2CB,100%25]');
    set('count_suppliers', '007');
    set('count_customers', '12345678901234567');
    set('is_active', 'true');
    set('is_cluster_parent', 'true');
    set('ipo_date', '2024-04-31');
    set(
      'identifiers',
      '[{"type":"lei","value":"b"},{"type":"duns","value":"Z"},{"type":"duns","value":"a"}]',
    );
    set(
      'addresses',
      '[{"address_line":null,"city":"Oslo \\"Ø\\"","region":null,"postal_code":"0150","country":"NO","type":"hq"}]',
    );
    const line = odd.join('\t');
    expect(json(line)!.text).toBe(expected(line));
    expect(JSON.parse(json(line)!.text)).toMatchObject({
      aliases: ['A,B', '100%'],
      identifiers: [
        { type: 'duns', value: 'a' },
        { type: 'duns', value: 'Z' },
        { type: 'lei', value: 'b' },
      ],
      count_suppliers: 7,
      is_cluster_parent: true,
      incorporation_date: '2024-02-29T00:00:00.000Z',
    });
    // Fewer fields than columns, and more: as split reads them.
    const short = odd.slice(0, 5).join('\t');
    expect(json(short)!.text).toBe(expected(short));
    const long = `${line}\textra\tmore`;
    expect(json(long)!.text).toBe(expected(long));
    // A line without a vid is no profile: nothing could ask for it.
    expect(json(`\t${odd.slice(1).join('\t')}`)).toBeNull();
  });

  it('copies identifiers already in the profile form and order, and maps any others alike', () => {
    const columns = stagedColumns('Company');
    const decode = stagedRowDecoder('Company', columns);
    const profiles = new StagedProfileWriter(columns);
    const line = (identifiers: string, date = '') =>
      columns
        .map((c) =>
          c === 'vid' ? 'v1' : c === 'identifiers' ? identifiers : c === 'incorporation_date' ? date : '',
        )
        .join('\t');
    const written = (text: string) => {
      const bytes = Buffer.from(text, 'utf8');
      const w = profiles.write(bytes, 0, bytes.length)!;
      return w.json.toString('utf8', 0, w.length);
    };
    const expected = (text: string) => JSON.stringify(toProfile(decode(text.split('\t'))));
    const id = (type: string, value: string) => `{"type":"${type}","value":"${value}"}`;
    // In the profile's order already: copied, so not parsed.
    const inOrder = [
      `[${id('DUNS', '123456789')}]`,
      `[${id('DUNS', '1')},${id('DUNS', '2')},${id('LEI', '5299000J2N45DDNE4Y28')}]`,
      // byTypeThenValue's order (the locale's), not the order of code units the staging sorts by.
      `[${id('duns', 'a')},${id('duns', 'b')},${id('duns', 'B')}]`,
    ];
    for (const identifiers of inOrder) {
      const text = line(identifiers);
      const want = expected(text);
      const parse = jest.spyOn(JSON, 'parse');
      const got = written(text);
      expect(parse).not.toHaveBeenCalled();
      parse.mockRestore();
      expect(got).toBe(want);
      expect(got).toContain(`"identifiers":${identifiers}`);
    }
    // Any other form or order: as toProfile maps them.
    const others = [
      `[${id('duns', 'Z')},${id('duns', 'a')}]`, // the staging's order, not the profile's
      `[${id('LEI', 'x')},${id('DUNS', 'y')}]`,
      `[${id('Wikipedia', 'Zürich')}]`,
      `[${id('a', 'say \\"hi\\"')}]`,
      '[{"value":"x","type":"y"}]',
      '[{"type":"y","value":"x","extra":"z"}]',
      '[{"type":"y","value":null}]',
      `[${id('a', 'b')}`,
      `[${id('a', 'b')},]`,
      `[${id('a', 'b')}] `,
      `${id('a', 'b')}`,
      '[{"type":"a"}]',
      '[{"type":"a","value":"b"x]',
      '[{"type":"a","value":"\\u0041\\/"}]',
      '[{"type":"a","value":"bell \u0007"}]',
      'not json',
    ];
    for (const identifiers of others) {
      const text = line(identifiers);
      expect(written(text)).toBe(expected(text));
    }
    // Bytes that are not UTF-8 read as the decoder reads them, not copied.
    const bytes = Buffer.from(line(`[${id('DUNS', 'AB')}]`), 'utf8');
    const at = bytes.indexOf('"AB"') + 1;
    bytes[at] = 0xf0;
    bytes[at + 1] = 0x90;
    const w = profiles.write(bytes, 0, bytes.length)!;
    expect(Buffer.from(w.json.subarray(0, w.length))).toEqual(Buffer.from(expected(bytes.toString('utf8'))));
    // Every cut of a list in order: only the whole list is copied.
    const whole = inOrder[1]!;
    for (let i = 1; i < whole.length; i++) {
      const text = line(whole.slice(0, i));
      expect(written(text)).toBe(expected(text));
    }
    // Dates, the same ones again and again, and one that is no day: each as iso maps it.
    for (const date of ['2001-05-17', '2001-05-17T00:00:00Z', '2024-04-31', '2001-05-17', '2024-04-31', 'x'])
      expect(written(line('[]', date))).toBe(expected(line('[]', date)));
  });
});

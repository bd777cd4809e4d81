import fs from 'node:fs';
import path from 'node:path';
import {
  HeldPointFile,
  PointFile,
  PointFileWriter,
  moveDerivedFile,
  pointFileCounts,
  removeDerivedFile,
  sortEntries,
  writePointFile,
} from '../../src/store/point-file';
import * as fileIo from '../../src/store/file-io';
import type * as pointFileModule from '../../src/store/point-file';
import { toEdge, toProfile } from '../../src/store/mappers';
import { LineEntries, readStagedKeys, StagedKeysBuilder } from '../../src/store/staged-keys';
import type { StagedKeys } from '../../src/store/staged-keys';
import { TABLES } from '../../src/store/tables';
import { stagedRowDecoder } from '../../src/store/staging-file';
import { RETRY_FAILED_MS } from '../../src/store/derived-state';
import { tempDir } from '../support/paths';

type PointFileModule = typeof pointFileModule;

/** Two vids whose FNV-1a hashes are equal, so the index holds one value twice. */
const SAME_HASH = ['c2ya8', 'czki6'];

describe('PointFile', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = tempDir('point-file-unit');
    file = path.join(dir, 'g.point-reads');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A profile as the stores write it: an engine row (INT64 as a bigint) through toProfile. */
  const company = (i: number) =>
    toProfile({
      vid: `v${i}`,
      name: `Company ${i} — Zürich 株式会社`,
      count_suppliers: BigInt(i),
      incorporation_date: '2001-02-03',
      identifiers: JSON.stringify([{ type: 'lei', value: `L${i}` }]),
    });
  const named = (vid: string) => toProfile({ vid, name: vid });
  /** An edge whose evidence the mapper reorders, newest first, with every field of an item set. */
  const evidenced = toEdge({
    edge_id: 'e2',
    supplier_id: 'v1',
    customer_id: 'v2',
    confidence_score: 0.75,
    hs_codes: '[8482,8483]',
    evidences: JSON.stringify([
      [
        'ev1',
        '2023-05-06',
        'bill_of_lading',
        'https://a.example/1',
        'a.example',
        2,
        true,
        'm',
        '2023-05-07',
        '2023-05-08T09:10:11.000Z',
        null,
      ],
      [
        'ev2',
        '2024-01-02',
        'news',
        'https://b.example/2',
        'b.example',
        1,
        false,
        null,
        null,
        null,
        '2024-01-03',
      ],
    ]),
  });

  it('finds every row by its key, and none for a key it does not hold', async () => {
    const w = new PointFileWriter(file);
    for (let i = 0; i < 20_000; i += 1000)
      w.addCompanies(Array.from({ length: 1000 }, (_, j) => company(i + j)));
    w.addCompanies(SAME_HASH.map(named));
    // A record longer than the reader's buffer and than the writer's chunk.
    w.addEdges([
      { ...toEdge({ edge_id: 'big' }), hs_codes: ['x'.repeat(5 * 1024 * 1024)] },
      toEdge({ edge_id: 'e1', label: 'supply' }),
      evidenced,
    ]);
    // A row without its key maps to an empty one, which is not kept.
    w.addCompanies([toProfile({ name: 'no key' })]);
    expect(w.written).toEqual({ companies: 20_002, edges: 3 });
    w.finish('k1');
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);

    const f = (await PointFile.open(file, 'k1'))!;
    try {
      expect(f.counts).toEqual({ companies: 20_002, edges: 3 });
      expect(f.holdsEdges).toBe(true);
      for (const i of [0, 1, 999, 1000, 12_345, 19_999]) {
        expect(f.company(`v${i}`)).toEqual(company(i));
      }
      expect(SAME_HASH.map((vid) => f.company(vid)?.name)).toEqual(SAME_HASH);
      expect(f.company('v20000')).toBeNull();
      expect(f.company('czki7')).toBeNull();
      expect(f.company('e1')).toBeNull();
      expect(f.edge('e1')).toEqual(toEdge({ edge_id: 'e1', label: 'supply' }));
      // Field for field and in the same order as the mapper made it, though kept positionally.
      expect(JSON.stringify(f.edge('e2'))).toBe(JSON.stringify(evidenced));
      expect(f.edge('e2')?.evidences.map((e) => e.id)).toEqual(['ev2', 'ev1']);
      expect(f.edge('big')?.hs_codes[0]?.length).toBe(5 * 1024 * 1024);
      expect(f.edge('v1')).toBeNull();
    } finally {
      f.close();
    }
    expect(pointFileCounts(file)).toEqual({ companies: 20_002, edges: 3 });
  });

  it('opens the file it wrote with the index it sorted, reading none of it back', async () => {
    const reads = jest.spyOn(fileIo, 'readExactlyAsync');
    let f: PointFile | null = null;
    try {
      f = await writePointFile(file, 'k', { companies: 5002, edges: 1 }, async (w) => {
        w.addCompanies(Array.from({ length: 5000 }, (_, i) => company(i)));
        w.addCompanies(SAME_HASH.map(named));
        w.addEdges([evidenced]);
        return Promise.resolve(true);
      });
      expect(reads).not.toHaveBeenCalled();
      for (const g of [f!, (await PointFile.open(file, 'k'))!]) {
        try {
          expect(g.counts).toEqual({ companies: 5002, edges: 1 });
          for (const i of [0, 1, 2500, 4999]) expect(g.company(`v${i}`)).toEqual(company(i));
          expect(SAME_HASH.map((vid) => g.company(vid)?.name)).toEqual(SAME_HASH);
          expect(g.company('v5000')).toBeNull();
          expect(JSON.stringify(g.edge('e2'))).toBe(JSON.stringify(evidenced));
        } finally {
          g.close();
        }
      }
    } finally {
      reads.mockRestore();
      f?.close();
    }
  });

  it('keeps the index of counts it is told in arrays of that size, sorted where they are', () => {
    const w = new PointFileWriter(file, { companies: 3000, edges: 0 });
    w.addCompanies(Array.from({ length: 3000 }, (_, i) => company(i)));
    const { companies } = w.finish('k');
    // 3,000 rows, not the 4,096 the arrays would have doubled to.
    expect(companies.hashes.buffer.byteLength).toBe(3000 * 4);
    expect(companies.offsets.buffer.byteLength).toBe(3000 * 8);
    expect(companies.lengths.buffer.byteLength).toBe(3000 * 4);
  });

  it('sorts rows by their kept hash bits in place, each keeping its offset and length', () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    // Past 2^21 rows the index keeps fewer than 32 bits of each hash.
    for (const [n, distinct, shift] of [
      [0, 1, 0],
      [1, 1, 0],
      [2, 1, 0],
      [1000, 5, 0],
      [50_000, 2 ** 32, 0],
      [70_000, 40_000, 0],
      [2_200_000, 2 ** 32, 1],
    ] as const) {
      const e = new LineEntries(n === 0 ? 8 : Math.ceil(n / 3));
      // Row i: its length is i, its offset 10.5 i, so each says which row it was.
      for (let i = 0; i < n; i++) e.push(((random() % distinct) * 7919) >>> 0, i * 10.5, i);
      const hashOf = e.hashes.slice(0, n);
      const index = sortEntries(e);
      expect(index.shift).toBe(shift);
      expect(index.offsets.buffer).toBe(e.offsets.buffer);
      expect([index.hashes.length, index.offsets.length, index.lengths.length]).toEqual([n, n, n]);
      const seen = new Uint8Array(n);
      let wrong = 0;
      for (let j = 0; j < n; j++) {
        const i = index.lengths[j]!;
        if (i >= n || seen[i] || index.offsets[j] !== i * 10.5 || index.hashes[j] !== hashOf[i]! >>> shift)
          wrong++;
        seen[i] = 1;
        // In order of kept bits, and of rows among equal ones (as a stable sort would leave them).
        if (j > 0) {
          const before = index.hashes[j - 1]!;
          if (before > index.hashes[j]! || (before === index.hashes[j] && index.lengths[j - 1]! > i)) wrong++;
        }
      }
      expect(wrong).toBe(0);
    }
  });

  it('reads itself through for the page cache, and stops once closed', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies(Array.from({ length: 5000 }, (_, i) => company(i)));
    w.finish('k');
    const bytes = fs.statSync(file).size;
    expect(bytes).toBeGreaterThan(1024 * 1024); // more than one chunk
    const f = (await PointFile.open(file, 'k'))!;
    expect(f.bytes).toBe(bytes);
    expect(await f.warm()).toBe(bytes);
    const warming = f.warm();
    f.close();
    expect(await warming).toBe(0);
  });

  it('reads its indexes on the thread pool: the opening thread reads only the footer', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies(Array.from({ length: 5000 }, (_, i) => company(i)));
    w.finish('k');
    const reads = jest.spyOn(fs, 'readSync');
    let f: PointFile | null;
    try {
      f = await PointFile.open(file, 'k');
      // The header, the trailer and the footer's text; the index (80 KB here) comes after them.
      const largest = Math.max(...reads.mock.calls.map((call) => Number((call as unknown[])[3] ?? 0)));
      expect(reads.mock.calls.length).toBeLessThanOrEqual(3);
      expect(largest).toBeLessThan(4096);
    } finally {
      reads.mockRestore();
    }
    try {
      expect(f!.company('v4321')).toEqual(company(4321));
      expect(f!.company('v5000')).toBeNull();
    } finally {
      f!.close();
    }
  });

  it('answers an empty kind with null', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    w.finish('k1');
    const f = (await PointFile.open(file, 'k1'))!;
    expect(f.holdsEdges).toBe(false);
    expect(f.edge('e1')).toBeNull();
    f.close();
    f.close();
  });

  it('is not used for another key, nor when it is a file of the former SQLite layout', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    w.finish('k1');
    expect(await PointFile.open(file, 'k2')).toBeNull();
    expect(await PointFile.open(path.join(dir, 'absent'), 'k1')).toBeNull();
    fs.writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096)]));
    expect(await PointFile.open(file, 'k1')).toBeNull();
  });

  it('is not used when written in the layout that held the engine rows unmapped', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    w.finish('k1');
    const whole = fs.readFileSync(file);
    // Layout 2, the number after the magic: its rows would reach the readers unmapped.
    whole.writeUInt32LE(2, 8);
    fs.writeFileSync(file, whole);
    expect(await PointFile.open(file, 'k1')).toBeNull();
  });

  it('is written in layout 6, whose staged numbers a build of layout 5 would misread, and still reads layouts 3 and 5', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    w.finish('k1');
    const whole = fs.readFileSync(file);
    expect(whole.readUInt32LE(8)).toBe(6);
    for (const layout of [3, 5]) {
      whole.writeUInt32LE(layout, 8);
      fs.writeFileSync(file, whole);
      const f = (await PointFile.open(file, 'k1'))!;
      expect(f.company('v1')).toEqual(company(1));
      f.close();
    }
  });

  /**
   * Writes the staging file `name` in the test's directory: a header of `columns`, then `lines`, each
   * ending in a line feed; and the keys of its lines as an import notes them. A new file each time, as
   * each import stages into a directory of its own: one kept apart before is a link to the old.
   */
  const stagingFile = (name: string, columns: readonly string[], lines: readonly string[]) => {
    const staging = path.join(dir, name);
    const header = `${columns.join('\t')}\n`;
    fs.rmSync(staging, { force: true });
    fs.writeFileSync(staging, header + lines.map((l) => `${l}\n`).join(''));
    const keys = new StagedKeysBuilder(Buffer.byteLength(header));
    for (const l of lines) {
      const b = Buffer.from(l);
      const tab = b.indexOf(9);
      keys.line(b, 0, tab < 0 ? b.length : tab, b.length);
    }
    keys.save(`${staging}.keys`);
    return { path: staging, keys: readStagedKeys(`${staging}.keys`, fs.statSync(staging).size)! };
  };

  it("removes the rows' files a crashed write left, not those a point-read file beside it keeps", async () => {
    const edgeColumns = TABLES.Edge.columns.map(([name]) => name);
    const edges = stagingFile('Edge.tsv', edgeColumns, [
      edgeColumns.map((c) => (c === 'edge_id' ? 'e9' : c === 'evidences' ? '[]' : '')).join('\t'),
    ]);
    // Written under another name and moved into place, as the Neo4j store's import does.
    const imported = `${file}.import`;
    const w = new PointFileWriter(imported);
    w.addStagingFile('edges', edgeColumns, edges.path, edges.keys);
    w.finish('k1');
    moveDerivedFile(imported, file);
    const rowsOf = () => fs.readdirSync(dir).filter((n) => n.startsWith(`${path.basename(imported)}.edges-`));
    const [kept] = rowsOf();
    expect(kept).toBeDefined();
    // Left by a process that has ended; by an ended one of this process's pid (as every start in a
    // container is pid 1); and by one still running (this one's parent), whose write may be under way.
    const dead = `${path.basename(imported)}.edges-999999999-abc-1`;
    const samePid = `${path.basename(imported)}.edges-${process.pid}-zzz-9`;
    const running = `${path.basename(imported)}.edges-${process.ppid}-abe-3`;
    for (const name of [dead, samePid, running]) fs.writeFileSync(path.join(dir, name), 'edge lines');
    // The next write's look, in a process that linked none of these files itself.
    let removeOrphansApart!: (file: string, kind: 'edges') => void;
    jest.isolateModules(() => {
      ({ removeOrphansApart } = jest.requireActual<PointFileModule>('../../src/store/point-file'));
    });
    removeOrphansApart(imported, 'edges');
    expect(rowsOf().sort()).toEqual([kept!, running].sort());
    const f = (await PointFile.open(file, 'k1'))!;
    try {
      expect(f.edge('e9')?.edge_id).toBe('e9');
    } finally {
      f.close();
    }
  });

  it('keeps staged lines as they are, and maps the one row a read asks for', async () => {
    const companyColumns = TABLES.Company.columns.map(([name]) => name);
    const edgeColumns = TABLES.Edge.columns.map(([name]) => name);
    /** A staged line of `table` with the given fields, the others empty. */
    const line = (columns: string[], fields: Record<string, string>) =>
      columns.map((c) => fields[c] ?? '').join('\t');
    const acme = {
      vid: 'acme',
      name: 'Acme, Zürich 株式会社',
      count_suppliers: '12',
      is_public: 'true',
      incorporation_date: '2001-02-03T00:00:00.000Z',
      domains: '[acme.example,acme.test]',
      aliases: '[A%2CB,100%25]',
      identifiers: JSON.stringify([
        { type: 'vat', value: 'V1' },
        { type: 'lei', value: 'L1' },
      ]),
    };
    const edge = {
      edge_id: 'e9',
      supplier_id: 'acme',
      customer_id: 'v2',
      confidence_score: '0.75',
      latest_edge_date: '2024-01-02T00:00:00.000Z',
      hs_codes: '[8482]',
      evidences: JSON.stringify([
        ['ev1', '2023-05-06', 'news', null, null, 2, true, null, null, null, null],
        ['ev2', '2024-01-02', 'customs', null, null, null, null, null, null, null, '2024-01-03'],
      ]),
    };
    const companies = stagingFile('Company.tsv', companyColumns, [
      line(companyColumns, acme),
      line(companyColumns, { vid: 'bare' }),
      line(companyColumns, { vid: '' }),
    ]);
    const edges = stagingFile('Edge.tsv', edgeColumns, [line(edgeColumns, edge)]);
    const w = new PointFileWriter(file);
    w.addStagingFile('companies', companyColumns, companies.path, companies.keys);
    w.addStagingFile('edges', edgeColumns, edges.path, edges.keys);
    expect(() => w.addCompanies([company(1)])).toThrow('as staged lines and as records');
    expect(() => w.addStagingFile('edges', companyColumns, edges.path, edges.keys)).toThrow('other columns');
    expect(() => w.addStagingFile('edges', edgeColumns, edges.path, edges.keys)).toThrow('written twice');
    expect(w.written).toEqual({ companies: 2, edges: 1 });
    w.finish('k1');
    const f = (await PointFile.open(file, 'k1'))!;
    try {
      // As the mappers make the engine's row of the loaded line: numbers, booleans and lists decoded.
      const asEngine = { ...acme, count_suppliers: 12, is_public: true };
      expect(f.company('acme')).toEqual(toProfile(asEngine));
      expect(f.company('acme')).toMatchObject({
        aliases: ['A,B', '100%'],
        domains: ['acme.example', 'acme.test'],
        identifiers: [
          { type: 'lei', value: 'L1' },
          { type: 'vat', value: 'V1' },
        ],
        incorporation_date: '2001-02-03T00:00:00.000Z',
      });
      expect(f.company('bare')).toEqual(toProfile({ vid: 'bare' }));
      expect(f.edge('e9')).toEqual(toEdge({ ...edge, confidence_score: 0.75 }));
      expect(f.edge('e9')?.evidences.map((e) => e.id)).toEqual(['ev2', 'ev1']);
      expect(f.company('e9')).toBeNull();
      expect(f.company('acm')).toBeNull();
    } finally {
      f.close();
    }

    const other = new PointFileWriter(path.join(dir, 'other.point-reads'));
    expect(() => other.addStagingFile('edges', ['supplier_id', 'edge_id'], edges.path, edges.keys)).toThrow(
      'begin with supplier_id',
    );
    other.abort();
  });

  /** The Edge table's columns, and staged Edge lines whose keys have several bytes a character, one is empty (not indexed) and two share a hash. */
  const edgeColumns = TABLES.Edge.columns.map(([name]) => name);
  const edgeLines = (() => {
    const rest = edgeColumns
      .slice(2)
      .map(() => '')
      .join('\t');
    return [
      `e1\tv1\t${rest}`,
      `é日\tß\t${rest}`,
      `\tv3\t${rest}`,
      ...SAME_HASH.map((k) => `${k}\tv4\t${rest}`),
    ];
  })();

  /** Each of the staged Edge lines with a key read from `f` as its line maps, the others not at all. */
  const expectEachEdge = (f: PointFile, lines: readonly string[]) => {
    const decode = stagedRowDecoder('Edge', edgeColumns);
    for (const l of lines.filter((l) => !l.startsWith('\t'))) {
      const key = l.slice(0, l.indexOf('\t'));
      expect(f.edge(key)).toEqual(toEdge(decode(l.split('\t'))));
      expect(f.edge(key)?.edge_id).toBe(key);
    }
    expect(f.edge('é日')?.supplier_id).toBe('ß');
    expect(f.edge('')).toBeNull();
    expect(f.edge('e')).toBeNull();
  };

  describe('a staging file kept apart as its edges', () => {
    const columns = edgeColumns;
    const lines = edgeLines;
    const staging = () => path.join(dir, 'Edge.tsv');
    /** Writes the staging file with `supplier` in each line, and the keys of its lines as an import notes them. */
    const stage = (supplier = 'v'): StagedKeys =>
      stagingFile(
        'Edge.tsv',
        columns,
        lines.map((l) => l.replace(/\tv(\d)\t/, `\t${supplier}$1\t`)),
      ).keys;
    /** The files of rows kept apart, whichever point-read file they were written for. */
    const apartFiles = () => fs.readdirSync(dir).filter((f) => /^g\.point-reads\.(import\.)?edges-/.test(f));

    it('reads each edge from it by the keys the import noted, once the staging is gone', async () => {
      const keys = stage();
      expect(keys.count).toBe(4);
      const w = new PointFileWriter(file);
      w.addCompanies([company(1)]);
      w.addStagingFile('edges', columns, staging(), keys);
      expect(w.written).toEqual({ companies: 1, edges: 4 });
      expect(() => w.addStagingFile('edges', columns, staging(), keys)).toThrow('written twice');
      w.finish('k');
      // The import removes its staging directory once the store is loaded.
      fs.rmSync(staging());
      expect(apartFiles()).toHaveLength(1);
      const f = (await PointFile.open(file, 'k'))!;
      try {
        expectEachEdge(f, lines);
        expect(f.company('v1')).toEqual(company(1));
      } finally {
        f.close();
      }
    });

    it('is replaced with the file: a reader of the old one keeps reading it', async () => {
      const w1 = new PointFileWriter(file);
      w1.addStagingFile('edges', columns, staging(), stage('old'));
      w1.finish('k1');
      const old = (await PointFile.open(file, 'k1'))!;
      const w2 = new PointFileWriter(file);
      w2.addStagingFile('edges', columns, staging(), stage('new'));
      w2.finish('k2');
      // The old rows' file is gone from the directory; the old reader holds it open.
      expect(apartFiles()).toHaveLength(1);
      expect(old.edge('e1')?.supplier_id).toBe('old1');
      old.close();
      const f = (await PointFile.open(file, 'k2'))!;
      expect(f.edge('e1')?.supplier_id).toBe('new1');
      f.close();
    });

    it('refuses keys of another file, and a file whose rows kept apart are not those written', async () => {
      const keys = stage();
      const w = new PointFileWriter(file);
      expect(() => w.addStagingFile('edges', columns, staging(), { ...keys, bytes: keys.bytes + 1 })).toThrow(
        'other size',
      );
      w.abort();
      expect(readStagedKeys(`${staging()}.keys`, keys.bytes + 1)).toBeNull();
      const ok = new PointFileWriter(file);
      ok.addStagingFile('edges', columns, staging(), keys);
      ok.finish('k');
      fs.appendFileSync(path.join(dir, apartFiles()[0]!), 'more');
      await expect(PointFile.open(file, 'k')).rejects.toThrow('not the one written');
      fs.rmSync(path.join(dir, apartFiles()[0]!));
      await expect(PointFile.open(file, 'k')).rejects.toThrow(/ENOENT/);
    });

    it('moves into place with the file, as an import on Neo4j puts its derived files, and is removed with it', async () => {
      const pending = `${file}.import`;
      const write = (supplier: string) => {
        const w = new PointFileWriter(pending);
        w.addStagingFile('edges', columns, staging(), stage(supplier));
        w.finish('k');
      };
      write('one');
      moveDerivedFile(pending, file);
      const first = (await PointFile.open(file, 'k'))!;
      write('two');
      expect(apartFiles()).toHaveLength(2);
      moveDerivedFile(pending, file);
      // The rows of the file replaced are gone, but for the reader that holds them.
      expect(apartFiles()).toHaveLength(1);
      expect(first.edge('e1')?.supplier_id).toBe('one1');
      first.close();
      const second = (await PointFile.open(file, 'k'))!;
      expect(second.edge('e1')?.supplier_id).toBe('two1');
      second.close();
      // An import whose load failed: its file goes, with its rows, and the file in place stays whole.
      write('three');
      removeDerivedFile(pending);
      expect(apartFiles()).toHaveLength(1);
      expect((await PointFile.open(file, 'k'))!.edge('e1')?.supplier_id).toBe('two1');
      // Any other derived file is only moved or removed.
      const other = path.join(dir, 'g.search-index');
      fs.writeFileSync(`${other}.import`, 'an index');
      moveDerivedFile(`${other}.import`, other);
      expect(fs.readFileSync(other, 'utf8')).toBe('an index');
      removeDerivedFile(other);
      expect(fs.existsSync(other)).toBe(false);
      expect(apartFiles()).toHaveLength(1);
    });

    it('leaves nothing behind when the write is abandoned', () => {
      const w = new PointFileWriter(file);
      w.addStagingFile('edges', columns, staging(), stage());
      expect(apartFiles()).toHaveLength(1);
      w.abort();
      expect(apartFiles()).toEqual([]);
      expect(fs.existsSync(staging())).toBe(true);
    });
  });

  it('refuses a file that is cut short or not a point-read file', async () => {
    const w = new PointFileWriter(file);
    w.addCompanies(Array.from({ length: 100 }, (_, i) => company(i)));
    w.finish('k1');
    const whole = fs.readFileSync(file);
    fs.writeFileSync(file, whole.subarray(0, whole.length - 5));
    await expect(PointFile.open(file, 'k1')).rejects.toThrow(/cut short/);
    fs.writeFileSync(file, 'not a point-read file at all, but long enough');
    await expect(PointFile.open(file, 'k1')).rejects.toThrow(/not a point-read file/);
  });

  it('removes what a crashed write left behind, and keeps a write under way in another process', () => {
    const dead = `${file}.tmp-999999`;
    const old = `${file}.tmp`;
    // The parent process is running: its temporary file is a write under way (two servers, one DATA_DIR).
    const live = `${file}.tmp-${process.ppid}`;
    for (const f of [dead, old, live]) fs.writeFileSync(f, 'half a file');
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    expect(fs.readdirSync(dir).sort()).toEqual(
      [path.basename(live), `${path.basename(file)}.tmp-${process.pid}`].sort(),
    );
    w.finish('k');
    expect(fs.readdirSync(dir).sort()).toEqual([path.basename(file), path.basename(live)].sort());
  });

  it('leaves nothing behind when a write is abandoned', () => {
    const w = new PointFileWriter(file);
    w.addCompanies([company(1)]);
    w.abort();
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('HeldPointFile', () => {
  let dir: string;
  let generation: number;
  beforeEach(() => {
    dir = tempDir('held-point-file');
    generation = 1;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Writes a file whose one company is named after the generation it was written for. */
  const writeFor = async (g: number) => {
    const file = path.join(dir, `g${g}.point-reads`);
    return writePointFile(file, `k${g}`, { companies: 1, edges: 0 }, async (w) => {
      w.addCompanies([toProfile({ vid: 'v', name: `generation ${g}` })]);
      return Promise.resolve(true);
    });
  };

  it('answers only for the generation it was written for, and says where it stands', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const failed: unknown[] = [];
    const held = new HeldPointFile(
      'background',
      () => generation,
      async (g) => {
        await gate;
        return writeFor(g);
      },
      (err) => failed.push(err),
    );
    expect(held.state).toBe('unavailable');
    held.changed();
    expect(held.state).toBe('building');
    expect(held.file).toBeNull();
    release();
    await held.read();
    expect(held.state).toBe('ready');
    expect(held.file!.company('v')!.name).toBe('generation 1');

    // The data moves on: the old file no longer answers, and the next one is written for the new data.
    generation = 2;
    expect(held.file).toBeNull();
    expect(held.state).toBe('unavailable');
    held.changed();
    expect(held.state).toBe('building');
    await held.read();
    expect(held.file!.company('v')!.name).toBe('generation 2');
    expect(failed).toEqual([]);
    await held.close();
    expect(held.file).toBeNull();
  });

  it('drops a file finished after the data moved on, and reports a failed write once', async () => {
    const failed: number[] = [];
    let fail = false;
    const held = new HeldPointFile(
      'wait',
      () => generation,
      async (g) => {
        if (fail) throw new Error('disk full');
        const file = await writeFor(g);
        generation++; // an import ended while the file was written
        return file;
      },
      (_err, g) => failed.push(g),
    );
    await held.ready();
    expect(held.file).toBeNull();
    expect(held.state).toBe('unavailable');
    fail = true;
    held.changed();
    await held.ready();
    await held.ready(); // one write per generation, so one report
    expect(held.state).toBe('unavailable');
    expect(failed).toEqual([generation]);
  });

  it('in the background, begins a failed write again from a read once RETRY_FAILED_MS has passed', async () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'setImmediate'] });
    try {
      let down = true;
      let writes = 0;
      const held = new HeldPointFile(
        'background',
        () => generation,
        async (g) => {
          writes++;
          if (down) throw new Error('database unreachable');
          return writeFor(g);
        },
        () => undefined,
      );
      held.changed();
      await held.read();
      expect([held.state, writes]).toEqual(['unavailable', 1]);
      down = false;
      // Reads before the interval leave it be; the first one after begins it again.
      await held.ready();
      expect(writes).toBe(1);
      jest.setSystemTime(Date.now() + RETRY_FAILED_MS);
      await held.ready();
      expect(writes).toBe(2);
      await held.read();
      expect([held.state, writes]).toEqual(['ready', 2]);
      expect(held.file!.company('v')!.name).toBe('generation 1');
      await held.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses to finish a file that holds other counts than those counted, and leaves nothing', async () => {
    const file = path.join(dir, 'short.point-reads');
    await expect(
      writePointFile(file, 'k', { companies: 2, edges: 0 }, async (w) => {
        w.addCompanies([toProfile({ vid: 'v', name: 'one of two' })]);
        return Promise.resolve(true);
      }),
    ).rejects.toThrow(/1 companies and 0 edges, not the 2 and 0 counted/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('is off when point reads are', async () => {
    const held = new HeldPointFile(
      'off',
      () => generation,
      () => writeFor(generation),
      () => undefined,
    );
    held.changed();
    expect(await held.read()).toBeNull();
    expect(held.state).toBe('off');
  });
});

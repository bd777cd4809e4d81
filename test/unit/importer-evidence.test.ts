import { mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChunkWriter, TextBuffer } from '../../src/import/csv';
import {
  BucketStore,
  bucketCount,
  bucketOf,
  bucketStart,
  EvidenceLines,
  jsonString,
  jsonText,
  openEvidenceSink,
} from '../../src/import/evidence-buckets';
import { isoOf } from '../../src/import/format';
import type * as EvidenceBuckets from '../../src/import/evidence-buckets';
import { LineEntries, readStagedKeys } from '../../src/store/staged-keys';
import { fnv1a } from '../../src/store/string-hash';
import { encodeJson } from '../../src/store/tables';
import { compiledModule } from '../support/compiled-sources';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tg-evidence-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('bucket ranges', () => {
  it('give every edge to exactly the bucket whose range holds it', () => {
    for (const n of [1, 2, 7, 10, 49999, 50000, 50001, 123457, 5091712, 40000000]) {
      const nb = bucketCount(n);
      expect(nb).toBeGreaterThanOrEqual(1);
      expect(nb).toBeLessThanOrEqual(256);
      expect(bucketStart(0, nb, n)).toBe(0);
      expect(bucketStart(nb, nb, n)).toBe(n);
      for (let b = 0; b < nb; b++) {
        const lo = bucketStart(b, nb, n);
        const hi = bucketStart(b + 1, nb, n);
        expect(hi).toBeGreaterThan(lo);
        for (const e of [lo, hi - 1]) expect(bucketOf(e, nb, n)).toBe(b);
      }
    }
    expect(bucketCount(5091712)).toBe(102);
  });
});

describe('jsonString', () => {
  it('writes what encodeJson writes', () => {
    for (const s of ['plain', 'say "hi"', 'back\\slash', 'tab\there', 'ß and 日本', 'lone \ud800', '\\"']) {
      expect(jsonString(s)).toBe(encodeJson(s));
    }
  });
});

/** A staged date as its JSON: without its time at midnight UTC; null for none. */
function dateJson(ms: number): string {
  if (Number.isNaN(ms)) return 'null';
  const s = isoOf(ms);
  return s.endsWith('T00:00:00Z') ? `"${s.slice(0, 10)}"` : `"${s}"`;
}

describe('EvidenceLines', () => {
  it('writes the UTF-8 of each bucket line as the JSON helpers spell it, escaped text included', () => {
    type Item = Parameters<EvidenceLines['add']>;
    const day = Date.parse('2021-03-04T00:00:00Z');
    const items: Item[] = [
      [0, day, 'v1', 'text', 'https://a.example.com/x', 'a.example.com', '1', 'true', '', NaN, NaN, NaN],
      [9, day + 1, 'v2', '', '', '', '', '', 'say "hi"', day, day + 3600000, day - 1],
      [
        10,
        Date.parse('1950-06-01T12:30:45Z'),
        'v3',
        'customs',
        '',
        '',
        '12',
        'false',
        'tab\there\nand\u0001',
        NaN,
        day,
        NaN,
      ],
      [
        1234567,
        day,
        'v4',
        'filing',
        'https://例え.jp/ü?q=1',
        'bücher.example',
        '',
        '',
        'ß, 日本 and 😀',
        NaN,
        NaN,
        day,
      ],
      [11, day, 'v5', 'text', '', '', '', '', 'back\\slash', NaN, NaN, NaN],
      // Not a valid id, but the writer must still spell it as UTF-8, not byte by byte.
      [42, day, 'ïd', 'text', '', '', '', '', '', NaN, NaN, NaN],
    ];
    const want = items
      .map(
        ([e, date, id, type, url, domain, status, byCustomer, meta, fin, created, mod]) =>
          `${e}\t${isoOf(date)}\t${id}\t,[${jsonString(id)},${dateJson(date)},${type === '' ? 'null' : jsonString(type)},${jsonText(url)},${jsonText(domain)},${status === '' ? 'null' : status},${byCustomer === '' ? 'null' : byCustomer},${jsonText(meta)},${dateJson(fin)},${dateJson(created)},${dateJson(mod)}]\n`,
      )
      .join('');
    // A small first buffer, so that it grows on the way.
    const lines = new EvidenceLines(16);
    for (let round = 0; round < 50; round++) for (const it of items) lines.add(...it);
    const got = lines.take().toString('utf8');
    expect(got).toBe(want.repeat(50));
    expect(lines.size).toBe(0);
    // Long text whose every character takes several bytes, escaped or encoded: each must find room,
    // whatever was written before it.
    const long = ['"'.repeat(5000), '\\'.repeat(3000) + '\u0001'.repeat(2000), '日本😀'.repeat(3000)];
    const big = new EvidenceLines(16);
    for (const meta of long) {
      big.add(1, day, 'v9', '', '', '', '', '', meta, NaN, NaN, NaN);
      big.add(2, day, 'v8', '', '', '', '', '', 'x', NaN, NaN, NaN);
    }
    const bigLines = big.take().toString('utf8').trimEnd().split('\n');
    expect(bigLines).toHaveLength(6);
    for (const [k, meta] of long.entries()) {
      const line = bigLines[2 * k]!;
      expect(line).toBe(
        `1\t${isoOf(day)}\tv9\t,["v9","2021-03-04",null,null,null,null,null,${jsonText(meta)},null,null,null]`,
      );
      expect((JSON.parse(line.slice(line.indexOf('\t,') + 2)) as unknown[])[7]).toBe(meta);
      expect(bigLines[2 * k + 1]).toBe(
        `2\t${isoOf(day)}\tv8\t,["v8","2021-03-04",null,null,null,null,null,"x",null,null,null]`,
      );
    }
    // The JSON after each line's comma reads back as the item's fields.
    const parsed = want
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l.slice(l.indexOf('\t,') + 2)) as unknown[]);
    expect(parsed[1]).toEqual([
      'v2',
      '2021-03-04T00:00:00.001Z',
      null,
      null,
      null,
      null,
      null,
      'say "hi"',
      '2021-03-04',
      '2021-03-04T01:00:00Z',
      '2021-03-03T23:59:59.999Z',
    ]);
    expect(parsed[2]![1]).toBe('1950-06-01T12:30:45Z');
    expect(parsed[2]![7]).toBe('tab\there\nand\u0001');
    expect(parsed[3]!.slice(0, 5)).toEqual([
      'v4',
      '2021-03-04',
      'filing',
      'https://例え.jp/ü?q=1',
      'bücher.example',
    ]);
    expect(parsed[3]![7]).toBe('ß, 日本 and 😀');
    expect(parsed[4]![7]).toBe('back\\slash');
    expect(parsed[5]![0]).toBe('ïd');
  });
});

describe('BucketStore.add', () => {
  it('refuses a record without its edge or its line end instead of reading past the batch', async () => {
    // A folder of its own: the next test lists `work`.
    const dir = await mkdtemp(join(tmpdir(), 'tg-buckets-'));
    const store = new BucketStore(dir, 2, 10);
    await store.open();
    await expect(store.add(Buffer.from('7'))).rejects.toThrow('without its edge or its line end');
    await expect(store.add(Buffer.from('\tx\n'))).rejects.toThrow('without its edge or its line end');
    await expect(store.add(Buffer.from('3\t2021-01-01T00:00:00Z\tv1\t,["v1"]'))).rejects.toThrow(
      'without its edge or its line end',
    );
    await store.abandon();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('evidence sink (in this thread)', () => {
  it('sorts each edge’s items, across buckets and whatever the input order, and cleans up', async () => {
    const nEdges = 10;
    const nb = 3;
    const sink = await openEvidenceSink(work, nb, nEdges, false);
    expect((await readdir(work)).sort()).toEqual(['_evidence-0.tmp', '_evidence-1.tmp', '_evidence-2.tmp']);
    // Items of edge e: dates chosen to tie, differ by milliseconds only, or differ by days.
    const items: { e: number; id: string; date: string }[] = [];
    for (let e = 0; e < nEdges; e += 1) {
      if (e === 5) continue; // an edge without evidence
      items.push({ e, id: `b${e}`, date: '2021-01-01T00:00:00Z' });
      items.push({ e, id: `a${e}`, date: '2021-01-01T00:00:00Z' });
      items.push({ e, id: `c${e}`, date: '2021-01-01T00:00:00.005Z' });
      items.push({ e, id: `d${e}`, date: '2021-01-01T00:00:00.050Z' });
      items.push({ e, id: `e${e}`, date: '1950-06-01T00:00:00Z' });
      if (e === 9)
        for (let k = 0; k < 40; k++)
          items.push({ e, id: `m${100 + k}`, date: `20${10 + (k % 7)}-01-01T00:00:00Z` });
    }
    const mixed = [...items].sort(
      (x, y) => ((x.id.charCodeAt(0) * 7 + x.e * 13) % 17) - ((y.id.charCodeAt(0) * 7 + y.e * 13) % 17),
    );
    const add = (list: typeof items): void => {
      for (const it of list)
        sink.lines.add(it.e, Date.parse(it.date), it.id, 'text', '', '', '', '', '', NaN, NaN, NaN);
    };
    // A first pass that is thrown away, as when duplicate ids send the evidence through a second pass.
    add(mixed.slice(0, 10));
    await sink.flush();
    await sink.reset();
    add(mixed.slice(0, 30));
    await sink.flush();
    add(mixed.slice(30));
    await sink.seal();

    const edgeFile = join(work, 'Edge.tsv');
    const w = await ChunkWriter.create(edgeFile);
    w.write('edge_id\tevidences\n');
    await sink.startEdges(w);
    for (let b = 0; b < nb; b++) {
      const lo = bucketStart(b, nb, nEdges);
      const hi = bucketStart(b + 1, nb, nEdges);
      const prefixes = new TextBuffer();
      for (let e = lo; e < hi; e++) prefixes.write(`edge${e}\n`);
      await sink.writeEdges(b, lo, hi, prefixes.take());
    }
    await sink.finish();

    const text = await readFile(edgeFile, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const rows = text
      .slice(0, -1)
      .split('\n')
      .map((line) => line.split('\t'));
    for (const r of rows) expect(r.length).toBe(2);
    expect(rows.map((r) => r[0])).toEqual([
      'edge_id',
      ...Array.from({ length: nEdges }, (_, e) => `edge${e}`),
    ]);
    for (let e = 0; e < nEdges; e++) {
      const got = (JSON.parse(rows[e + 1]![1]!) as string[][]).map((x) => x[0]);
      const want = items
        .filter((x) => x.e === e)
        .sort((x, y) => Date.parse(y.date) - Date.parse(x.date) || (x.id < y.id ? -1 : 1))
        .map((x) => x.id);
      expect(got).toEqual(want);
    }
    expect(rows[1]![1]).toBe(
      '[' +
        [
          ['d0', '2021-01-01T00:00:00.050Z'],
          ['c0', '2021-01-01T00:00:00.005Z'],
          ['a0', '2021-01-01'],
          ['b0', '2021-01-01'],
          ['e0', '1950-06-01'],
        ]
          .map(([id, date]) => `["${id}","${date}","text",null,null,null,null,null,null,null,null]`)
          .join(',') +
        ']',
    );
    expect(rows[6]![1]).toBe('[]');
    expect((await readdir(work)).filter((f) => f.startsWith('_evidence-'))).toEqual([]);
  });
});

type EvidenceModule = typeof EvidenceBuckets;

/** Runs evidence records through a sink (with a discarded first pass) and returns the Edge file it writes. */
async function edgesThrough(mod: EvidenceModule, dir: string, inWorker: boolean): Promise<string> {
  const nEdges = 500;
  const nb = mod.bucketCount(nEdges) + 2;
  mkdirSync(dir, { recursive: true });
  const sink = await mod.openEvidenceSink(dir, nb, nEdges, inWorker);
  type Item = Parameters<EvidenceLines['add']>;
  const records: Item[] = [];
  for (let k = 0; k < 6000; k++) {
    const e = (k * 7919) % nEdges;
    const day = String(1 + (k % 28)).padStart(2, '0');
    records.push([
      e,
      Date.parse(`2020-03-${day}T00:00:00Z`),
      `id${k}`,
      'text',
      `https://x.example.com/${k}`,
      'x.example.com',
      '1',
      'true',
      k % 3 === 0 ? 'say "hi" \\ ß' : '',
      NaN,
      NaN,
      NaN,
    ]);
  }
  // Several hand-overs' worth before the reset, and more not yet handed over, so that both a moved
  // buffer and a pending one are thrown away.
  for (const [i, r] of records.slice(0, 3000).entries()) {
    sink.lines.add(...r);
    if (i % 500 === 0) await sink.flush();
  }
  await sink.reset();
  for (const [i, r] of records.entries()) {
    sink.lines.add(...r);
    if (i % 500 === 0) await sink.flush();
  }
  await sink.seal();
  const edgeFile = join(dir, 'Edge.tsv');
  const w = await ChunkWriter.create(edgeFile);
  w.write('edge_id\tlabel\tevidences\n');
  await sink.startEdges(w);
  for (let b = 0; b < nb; b++) {
    const lo = mod.bucketStart(b, nb, nEdges);
    const hi = mod.bucketStart(b + 1, nb, nEdges);
    const prefixes = new TextBuffer();
    // Keys of many bytes a character, and one empty, which no read could ask for.
    for (let e = lo; e < hi; e++)
      prefixes.write(`${e === 3 ? '' : e % 50 === 7 ? `édge-株${e}` : `edge${e}`}\tx\n`);
    await sink.writeEdges(b, lo, hi, prefixes.take());
  }
  await sink.finish();
  return readFile(edgeFile, 'utf8');
}

describe('evidence sink (in a worker thread)', () => {
  it('writes exactly what the in-thread sink writes', async () => {
    const compiled = compiledModule<EvidenceModule>(join(work, 'compiled'), 'import/evidence-buckets');
    expect(compiled.evidenceWorkerAvailable()).toBe(true);
    const local = await edgesThrough(compiled, join(work, 'local'), false);
    const worker = await edgesThrough(compiled, join(work, 'worker'), true);
    expect(worker === local).toBe(true);
    const rows = local.trimEnd().split('\n');
    expect(rows).toHaveLength(501);
    const items = rows.slice(1).flatMap((r) => JSON.parse(r.split('\t')[2]!) as unknown[][]);
    expect(items).toHaveLength(6000);
    expect(items.filter((i) => i[7] === 'say "hi" \\ ß')).toHaveLength(2000);
    expect((await readdir(join(work, 'worker'))).sort()).toEqual(['Edge.tsv', 'Edge.tsv.keys']);
    // Where each line is and its key's hash, as reading the file back finds them.
    const file = readFileSync(join(work, 'local', 'Edge.tsv'));
    const header = file.indexOf(10) + 1;
    const read = new LineEntries();
    read.addLines(file, header, file.length, header);
    expect(read.count).toBe(499);
    for (const dir of ['local', 'worker']) {
      const keys = readStagedKeys(join(work, dir, 'Edge.tsv.keys'), file.length)!;
      expect(keys.count).toBe(499);
      expect(keys.hashes).toEqual(read.hashes.subarray(0, read.count));
      expect(keys.offsets).toEqual(read.offsets.subarray(0, read.count));
      expect(keys.lengths).toEqual(read.lengths.subarray(0, read.count));
    }
    // Edge 57's line is the 56th (edge 3's, without a key, is not noted).
    const at = read.offsets[56]!;
    const line = file.toString('utf8', at, at + read.lengths[56]!);
    expect(line.startsWith('édge-株57\tx\t[')).toBe(true);
    expect(line.endsWith(']')).toBe(true);
    expect(read.hashes[56]).toBe(fnv1a('édge-株57'));
  }, 30000);
});

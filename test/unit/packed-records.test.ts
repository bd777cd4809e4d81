import { PackedRecordsBuilder } from '../../src/search/packed-records';

describe('packed records', () => {
  it('gives back every record as added, across chunk boundaries and with any text', () => {
    const builder = new PackedRecordsBuilder();
    const records = Array.from({ length: 30_000 }, (_, i) => ({
      i,
      text: `${'Müller Präzision 株式会社 '.repeat(i % 40)}${i}`,
      list: i % 3 === 0 ? [] : [String(i)],
    }));
    // One record larger than a chunk.
    records.push({ i: -1, text: 'x'.repeat(9 * 1024 * 1024), list: [] });
    for (const r of records) builder.add(r);
    const packed = builder.build();
    expect(packed.size).toBe(records.length);
    for (const k of [0, 1, 2, 12_345, 29_999, 30_000]) expect(packed.get(k)).toEqual(records[k]);
    expect(packed.get(-1)).toBeUndefined();
    expect(packed.get(records.length)).toBeUndefined();
    // The bytes held are the records' JSON, not whole chunks.
    const json = records.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);
    expect(packed.bytes).toBe(json);
  });
});

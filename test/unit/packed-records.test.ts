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

  it("joins a packed record's bytes and a tail into the record their texts make", () => {
    const first = new PackedRecordsBuilder();
    const heads = Array.from({ length: 40_000 }, (_, i) => `[${i},"${'Präzision 株式会社 '.repeat(i % 30)}"`);
    heads.push(`["${'y'.repeat(9 * 1024 * 1024)}"`);
    for (const h of heads) first.addText(h);
    const prefixes = first.build();
    const joined = new PackedRecordsBuilder();
    const tail = (i: number): string => `,${i % 7},${i}]`;
    for (let i = 0; i < heads.length; i++) {
      expect(prefixes.bytesOf(i).equals(Buffer.from(heads[i]!))).toBe(true);
      joined.addJoined(prefixes.bytesOf(i), tail(i));
    }
    const done = joined.build();
    expect(done.size).toBe(heads.length);
    for (let i = 0; i < heads.length; i++) expect(done.text(i)).toBe(heads[i] + tail(i));
    expect(done.bytes).toBe(heads.reduce((n, h, i) => n + Buffer.byteLength(h + tail(i)), 0));
  });

  it('keeps what it built when records are added after', () => {
    const builder = new PackedRecordsBuilder();
    // Nearly a whole chunk of 8 MiB: kept as it is when the build seals it, not copied.
    const long = 'f'.repeat(8 * 1024 * 1024 - 1000);
    builder.add({ a: long });
    builder.add({ b: 'second' });
    const built = builder.build();
    builder.add({ c: 'written after the build' });
    expect(built.get(0)).toEqual({ a: long });
    expect(built.get(1)).toEqual({ b: 'second' });
    expect(builder.build().get(2)).toEqual({ c: 'written after the build' });
  });
});

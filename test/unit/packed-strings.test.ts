import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PackedStrings } from '../../src/store/packed-strings';
import { SnapshotReader, SnapshotWriter } from '../../src/store/snapshot';
import { fnv1a } from '../../src/store/string-hash';

const VALUES = [
  'Acme GmbH',
  null,
  '',
  'Müller Präzision 株式会社',
  undefined,
  '😀 emoji',
  'x'.repeat(10_000),
];
const EXPECTED = VALUES.map((v) => v ?? null);

describe('packed strings', () => {
  it('gives back every value, nulls as null, and null beyond the ends', () => {
    const packed = PackedStrings.from(VALUES);
    expect(packed.length).toBe(VALUES.length);
    expect(VALUES.map((_, i) => packed.get(i))).toEqual(EXPECTED);
    for (const i of [-1, VALUES.length, 1.5, Number.NaN]) expect(packed.get(i)).toBeNull();
    const utf8 = VALUES.reduce((n, v) => n + Buffer.byteLength(v ?? ''), 0);
    expect(packed.bytes).toBe(utf8 + 4 * (VALUES.length + 1) + VALUES.length);
  });

  it('tells whether a value equals a string as comparing the decoded strings would', () => {
    const packed = PackedStrings.from(VALUES);
    const probes = [
      ...EXPECTED.filter((v): v is string => v !== null),
      'Acme GmbH ',
      'Acme GmbX',
      'Acme',
      'Müller Präzision',
      'Muller Präzision 株式会社',
      '😀 emojj',
      'x'.repeat(9_999),
      'x'.repeat(10_001),
      'null',
    ];
    for (let i = -1; i <= VALUES.length; i++) {
      for (const s of probes) expect([i, s, packed.equals(i, s)]).toEqual([i, s, packed.get(i) === s]);
    }
    expect(packed.equals(1, '')).toBe(false);
    expect(packed.equals(2, '')).toBe(true);
  });

  it('reads back from a snapshot what it saved, and refuses parts that disagree', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packed-strings-'));
    try {
      const w = new SnapshotWriter();
      PackedStrings.from(VALUES).writeTo(w);
      PackedStrings.from([]).writeTo(w);
      // Offsets that run past the text.
      w.bytes(Buffer.from('abc')).array(Uint32Array.of(0, 5)).array(Uint8Array.of(0));
      await w.save(path.join(dir, 's'), 'k');
      const r = SnapshotReader.open(path.join(dir, 's'), 'k')!;
      try {
        const read = PackedStrings.readFrom(r)!;
        expect(VALUES.map((_, i) => read.get(i))).toEqual(EXPECTED);
        expect(PackedStrings.readFrom(r)!.length).toBe(0);
        expect(PackedStrings.readFrom(r)).toBeNull();
        expect(r.done).toBe(true);
      } finally {
        r.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PackedStrings.hash', () => {
  it('is the hash of each value as a text, read from its bytes', () => {
    const values = ['c57dtbp', '', 'Müller GmbH', '株式会社', 'emoji 😀', null, 'x'];
    const packed = PackedStrings.from(values);
    expect(values.map((_, i) => packed.hash(i))).toEqual(values.map((v) => fnv1a(v ?? '')));
  });
});

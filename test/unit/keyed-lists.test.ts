import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KeyedLists } from '../../src/search/keyed-lists';
import { SnapshotReader, SnapshotWriter } from '../../src/store/snapshot';

/** 5,000 keys, some sharing prefixes or differing only outside ASCII, with lists of 0 to 6 numbers. */
function source(): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (let i = 0; i < 5_000; i++) {
    const key = i % 7 === 0 ? `münchen-${i}` : i % 11 === 0 ? `東京${i}` : `lei${String(i).padStart(6, '0')}`;
    // Unsorted on purpose: the lists come back ascending.
    m.set(
      key,
      Array.from({ length: i % 7 }, (_, k) => (i * 31 + k * 977) % 100_003),
    );
  }
  m.set('', [42]);
  return m;
}

describe('keyed lists', () => {
  it('gives every key its list, ascending, and nothing for keys it does not hold', () => {
    const m = source();
    const lists = KeyedLists.from(m);
    expect(lists.size).toBe(m.size);
    for (const [key, list] of m) {
      expect(Array.from(lists.get(key)!)).toEqual([...list].sort((a, b) => a - b));
    }
    for (const missing of ['lei999999', 'münchen-1', 'munchen-7', 'LEI000001', 'lei00000', '東京']) {
      expect(lists.get(missing)).toBeUndefined();
    }
  });

  it('holds no key when built from an empty map', () => {
    const lists = KeyedLists.from(new Map());
    expect(lists.size).toBe(0);
    expect(lists.get('anything')).toBeUndefined();
    expect(lists.get('')).toBeUndefined();
  });

  it('reads back from a snapshot what it saved', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyed-lists-'));
    try {
      const m = source();
      const w = new SnapshotWriter();
      KeyedLists.from(m).writeTo(w);
      KeyedLists.from(new Map([['only', [3, 1, 2]]])).writeTo(w);
      await w.save(path.join(dir, 'lists'), 'k1');
      const r = SnapshotReader.open(path.join(dir, 'lists'), 'k1')!;
      try {
        const first = KeyedLists.readFrom(r)!;
        const second = KeyedLists.readFrom(r)!;
        expect(r.done).toBe(true);
        for (const [key, list] of m) {
          expect(Array.from(first.get(key)!)).toEqual([...list].sort((a, b) => a - b));
        }
        expect(Array.from(second.get('only')!)).toEqual([1, 2, 3]);
        expect(second.get('lei000001')).toBeUndefined();
      } finally {
        r.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads nothing from a saved table that could not answer, so the index is built again', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyed-lists-'));
    const section = (w: SnapshotWriter, slots: number[]) =>
      w
        .bytes(Buffer.from('ab'))
        .array(Uint32Array.from([0, 1, 2]))
        .array(Uint32Array.from([0, 1, 1]))
        .array(Uint32Array.from([7]))
        .array(Uint32Array.from(slots));
    try {
      const w = new SnapshotWriter();
      section(w, [1, 2, 0, 0]); // sound: two keys, half the slots empty
      section(w, [1, 2, 1, 2]); // no empty slot: a lookup of a missing key would probe forever
      section(w, [1, 2, 0]); // not a power of two
      section(w, [1, 3, 0, 0]); // an entry beyond the keys
      section(w, [1, 0, 0, 0]); // a key missing from the table
      await w.save(path.join(dir, 'lists'), 'k1');
      const r = SnapshotReader.open(path.join(dir, 'lists'), 'k1')!;
      try {
        const sound = KeyedLists.readFrom(r)!;
        expect(Array.from(sound.get('a')!)).toEqual([7]);
        expect(Array.from(sound.get('b')!)).toEqual([]);
        expect(sound.get('c')).toBeUndefined();
        for (let i = 0; i < 4; i++) expect(KeyedLists.readFrom(r)).toBeNull();
        expect(r.done).toBe(true);
      } finally {
        r.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KeyedLists, KeyedListsBuilder } from '../../src/search/keyed-lists';
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

  it('are gathered a value at a time as rows are read: keys in first-seen order, a repeat kept once', async () => {
    // Rows in order, each adding its number to a few keys, as a search index build does.
    const b = new KeyedListsBuilder();
    const expected = new Map<string, number[]>();
    for (let row = 0; row < 3000; row++) {
      const keys = [`city-${row % 50}`, `lei-${row}`, row % 4 === 0 ? `city-${row % 50}` : `host-${row % 7}`];
      for (const key of keys) {
        b.add(key, row);
        const list = expected.get(key) ?? [];
        if (list[list.length - 1] !== row) list.push(row);
        expected.set(key, list);
      }
    }
    b.key('never-given-a-value');
    expected.set('never-given-a-value', []);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyed-lists-'));
    const saved = async (lists: KeyedLists, name: string) => {
      const w = new SnapshotWriter();
      lists.writeTo(w);
      await w.save(path.join(dir, name), 'k');
      return fs.readFileSync(path.join(dir, name));
    };
    const built = b.build();
    expect(built.size).toBe(expected.size);
    expect(Array.from(built.get('city-0')!)).toEqual(expected.get('city-0'));
    expect(Array.from(built.get('lei-2999')!)).toEqual([2999]);
    expect(built.get('never-given-a-value')!.length).toBe(0);
    // Byte for byte what a Map of the same lists gives: a saved index is the same either way.
    try {
      const fromMap = await saved(KeyedLists.from(expected), 'from-map');
      expect((await saved(built, 'built')).equals(fromMap)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds thousands of keys of any length and script, each found by its own bytes', () => {
    // Past every first size of the builder: its table (1,024 keys), its key bytes (64 KiB) and the
    // buffer a key is encoded into (256 bytes).
    const b = new KeyedListsBuilder();
    const keys: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const key =
        i % 5 === 0
          ? `${'ä'.repeat(i % 300)}${i}`
          : i % 5 === 1
            ? `東京-${i}`
            : i % 5 === 2
              ? `x${'y'.repeat(i % 400)}-${i}`
              : `${i}`;
      keys.push(key);
    }
    // Keys that begin with every shorter one, the longest first: each new one is compared with
    // longer keys it is the beginning of, wherever they share a run of the table.
    for (let n = 600; n > 0; n--) keys.push('q'.repeat(n));
    const order = keys.map((_, i) => i);
    expect(keys.map((key) => b.key(key))).toEqual(order);
    for (let i = 0; i < keys.length; i++) b.add(keys[i]!, i);
    // Every key again, with a second value: ids stay, lists grow.
    expect(keys.map((key) => b.key(key))).toEqual(order);
    for (let i = 0; i < keys.length; i++) b.add(keys[i]!, i + 1);
    const built = b.build();
    expect(built.size).toBe(keys.length);
    expect(keys.map((key) => Array.from(built.get(key) ?? []))).toEqual(order.map((i) => [i, i + 1]));
    for (const missing of ['x', `${'ä'.repeat(299)}`, '東京-', '5000', 'y'.repeat(10)])
      expect(built.get(missing)).toBeUndefined();
  });

  it('sorts values a builder was given out of order', () => {
    const b = new KeyedListsBuilder();
    for (const v of [5, 3, 3, 9, 1]) b.add('k', v);
    b.add('other', 0);
    const built = b.build();
    expect(Array.from(built.get('k')!)).toEqual([1, 3, 5, 9]);
    expect(Array.from(built.get('other')!)).toEqual([0]);
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

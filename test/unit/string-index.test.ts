import { AsciiIndex, StringIndex } from '../../src/import/string-index';

/** Awkward keys: lengths 1 to 14, the 7-bit limit, NUL, non-ASCII, the empty string. */
function awkwardKeys(): string[] {
  const keys: string[] = [''];
  for (let n = 1; n <= 14; n++) {
    keys.push('a'.repeat(n), 'z'.repeat(n), '~'.repeat(n), `${'0'.repeat(n - 1)}1`, `1${'0'.repeat(n - 1)}`);
    keys.push(`${'a'.repeat(n - 1)}\u007f`, `${'a'.repeat(n - 1)}\u0080`, `${'a'.repeat(n - 1)}\u0000`);
  }
  // A key and the same key with a NUL after it must stay two keys.
  keys.push('ab', 'ab\u0000', 'ab\u0000\u0000', 'Ünïcode', 'ünicode', 'e\u0301', '\u00e9', '😀', '😀😀');
  return [...new Set(keys)];
}

/** Company- and edge-like ids, as an import numbers them. */
function ids(n: number, prefix: string, len: number): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789._-ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let seed = 7;
  const out = new Set<string>();
  while (out.size < n) {
    let s = prefix;
    while (s.length < len) {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      s += alphabet[seed % alphabet.length];
    }
    out.add(s);
  }
  return [...out];
}

type Index = StringIndex | AsciiIndex;

/** Number of k, adding it when new. */
function add(idx: Index, k: string): number {
  const i = idx.get(k);
  return i >= 0 ? i : idx.commit(k);
}

describe.each<[string, () => Index]>([
  ['StringIndex', () => new StringIndex()],
  ['AsciiIndex', () => new AsciiIndex()],
])('%s', (name, make) => {
  const ascii = name === 'AsciiIndex';
  // AsciiIndex takes ids, which are checked to be ASCII before they get there.
  const keys = (ks: string[]) => (ascii ? ks.filter((k) => [...k].every((c) => c.charCodeAt(0) < 128)) : ks);

  it('numbers every distinct key once, awkward ones too, across growths of its table', () => {
    const idx = make();
    const all = keys([...awkwardKeys(), ...ids(20000, 'c', 7), ...ids(20000, 'e', 9), ...ids(5000, 'x', 13)]);
    const want = new Map<string, number>();
    for (const k of all) {
      expect(idx.get(k)).toBe(-1);
      want.set(k, idx.commit(k));
    }
    expect(idx.size).toBe(all.length);
    // After every growth of the table, each key is still found, with its own number.
    for (const [k, i] of want) {
      expect(idx.get(k)).toBe(i);
      expect(idx.key(i)).toBe(k);
    }
    for (const k of keys(['ab\u0000\u0000\u0000', 'a'.repeat(15), 'c', 'e', 'zz\u0080z']))
      expect(idx.get(k)).toBe(-1);
  });

  it('tells apart keys that differ only in their last place or their length', () => {
    const idx = make();
    const base = 'abcdefghijkl';
    for (let n = 1; n <= base.length; n++) add(idx, base.slice(0, n));
    for (let n = 1; n <= base.length; n++) expect(idx.get(base.slice(0, n))).toBe(n - 1);
    expect(idx.get('abcdefghijkm')).toBe(-1);
    expect(idx.get('abcdefghijk\u0000')).toBe(-1);
    expect(idx.get('bbcdefghijkl')).toBe(-1);
  });

  it('commits only after a failed get', () => {
    const idx = make();
    add(idx, 'x');
    expect(() => idx.commit('y')).toThrow(/without a failed get/);
  });
});

describe('AsciiIndex.snapshot', () => {
  it('gives arrays from which another thread rebuilds the same numbering, the original left usable', () => {
    const idx = new AsciiIndex();
    const keys = ids(20_000, 'e', 9);
    for (const k of keys) add(idx, k);
    const snap = structuredClone(idx.snapshot());
    const copy = AsciiIndex.from(snap);
    expect(copy.size).toBe(keys.length);
    for (const [i, k] of keys.entries()) {
      expect(copy.get(k)).toBe(i);
      expect(copy.key(i)).toBe(k);
    }
    expect(copy.get('e-missing')).toBe(-1);
    // Both go on independently.
    expect(copy.commit('e-missing')).toBe(keys.length);
    expect(idx.get('e-missing')).toBe(-1);
    expect(add(idx, 'e-other')).toBe(keys.length);
    expect(copy.get('e-other')).toBe(-1);
    expect(copy.get(keys[123] as string)).toBe(123);
  });

  it('copies an empty index', () => {
    const copy = AsciiIndex.from(new AsciiIndex().snapshot());
    expect(copy.size).toBe(0);
    expect(copy.get('x')).toBe(-1);
    expect(copy.commit('x')).toBe(0);
    expect(copy.get('x')).toBe(0);
  });
});

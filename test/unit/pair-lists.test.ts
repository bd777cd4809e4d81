import { BoundReader } from '../../src/search/bound-lists';
import { PairLists } from '../../src/search/pair-lists';
import { importanceOf } from '../../src/search/relevance';
import { WordIndex } from '../../src/search/word-index';

describe('pair lists', () => {
  it('list each name under every two of its words, once, best bound first', async () => {
    // Names of several lengths holding two of four words in either order, some twice over, some with
    // legal forms, and names made only of legal forms.
    const roots = ['Delta', 'Orbit', 'Kappa', 'Sigma'];
    const names: string[][] = [];
    for (let i = 0; i < 300; i++) {
      const a = roots[i % 4]!;
      const b = roots[(i * 7 + 1) % 4]!;
      const filler = 'x'.repeat(i % 23);
      names.push([i % 5 === 0 ? `${a} ${b} ${a} GmbH` : `${a} ${filler} ${b} ${i}`, `${b} Alias ${i}`]);
    }
    names.push(['Corporation GmbH'], ['Delta']);
    const rank = Uint32Array.from(names.keys());
    const words = await WordIndex.build(names, rank, 1000);
    const importance = (doc: number) => importanceOf(doc % 50, 60, doc % 7 === 0);
    const trigrams = (doc: number) => 8 + (doc % 45);
    const pairs = await PairLists.build(words, trigrams, importance);

    // What every pair should list: the entries holding both of its (significant) words.
    const want = new Map<string, number[]>();
    const ids: number[] = [];
    for (let e = 0; e < words.entryDoc.length; e++) {
      const m = words.significantOf(e, ids);
      const held = [...new Set(ids.slice(0, m))].sort((x, y) => x - y);
      for (let i = 0; i < held.length; i++)
        for (let j = i + 1; j < held.length; j++) {
          const key = `${held[i]}-${held[j]}`;
          want.set(key, [...(want.get(key) ?? []), e]);
        }
    }
    expect(pairs.size).toBe(want.size);
    expect(want.size).toBeGreaterThan(300);
    const reader = new BoundReader(pairs.lists, (k) => pairs.rangeOf(k));
    let postings = 0;
    for (const [key, entries] of want) {
      const [a, b] = key.split('-').map(Number) as [number, number];
      const k = pairs.indexOf(a, b);
      expect(k).toBeGreaterThanOrEqual(0);
      expect(pairs.indexOf(b, a)).toBe(k);
      expect(reader.start(new Map([[k, 1]]), 0.4, 0.1, 12, 4096)).toBe(true);
      const read: number[] = [];
      let last = Infinity;
      while (reader.peek() !== -Infinity) {
        const bound = reader.peek();
        expect(bound).toBeLessThanOrEqual(last);
        last = bound;
        const e = reader.next();
        read.push(e);
        // The bound holds the key of a name meeting both words: importance, two words' precision, and
        // the first-word part when either is its first.
        const doc = words.entryDoc[e]!;
        const m = words.significantOf(e, ids);
        const key = 0.3 * importance(doc) + 0.1 / m + (ids[0] === a || ids[0] === b ? 0.025 : 0);
        expect(bound).toBeGreaterThanOrEqual(
          0.5 + key + 0.1 * (Math.min(12, trigrams(doc)) / Math.max(12, trigrams(doc))),
        );
      }
      expect(read.sort((x, y) => x - y)).toEqual(entries);
      postings += read.length;
    }
    expect(postings).toBeGreaterThan(600);
    // Words no name holds together, a word with itself, and ids beyond the vocabulary.
    const delta = words.idOf('delta');
    expect(pairs.indexOf(delta, delta)).toBe(-1);
    expect(pairs.indexOf(words.idOf('corporation'), delta)).toBe(-1);
    expect(pairs.indexOf(delta, words.vocabularySize + 5)).toBe(-1);
  });
});

import { acronymsOf, allowedEdits, editDistanceWithin, wordsOf } from '../../src/search/name-words';
import { matchEntry, planQuery } from '../../src/search/relevance';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WordIndex, WordIndexBuilder, entriesByRank } from '../../src/search/word-index';
import { SnapshotWriter } from '../../src/store/snapshot';

const NAMES = [
  'Nordic Steel Works',
  'Nordik Glass',
  'Nordics Motors Holdings',
  'Pacific Castings',
  'Pacifico Trading',
  'Semiconductor Manufacturing',
  'Semiconductors International',
  'Semikonductor Systems',
  'Acme Bolt',
  'Acne Steel',
  'Castings Norte',
  'Motor Holding',
];

/** Every word of the vocabulary within the edits a word of its length allows: what a typo may stand for. */
function withinEdits(word: string, vocab: readonly string[]): number[] {
  const edits = allowedEdits(word.length);
  if (edits === 0) return [];
  return vocab
    .map((w, id) => ({ w, id }))
    .filter(({ w }) => w !== word && editDistanceWithin(word, w, edits) <= edits)
    .map(({ id }) => id);
}

const build = (names: readonly string[], sliceMs?: number) =>
  WordIndex.build(
    names.map((n) => [n]),
    Uint32Array.from(names, (_, i) => i),
    sliceMs,
  );

describe('WordIndex.build', () => {
  it('lets other work run between slices of a long build, with the same index', async () => {
    const names = Array.from({ length: 3000 }, (_, i) => `${NAMES[i % NAMES.length]} ${i.toString(36)}x`);
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    try {
      const sliced = await build(names, 0);
      const whole = await build(names, Infinity);
      expect(turns).toBeGreaterThan(2);
      for (const word of ['nordic', 'nordig', '1zx', 'castings']) {
        expect([...sliced.typoWords(word)]).toEqual([...whole.typoWords(word)]);
      }
      expect(sliced.entriesOf(2999)).toEqual(whole.entriesOf(2999));
    } finally {
      clearInterval(tick);
    }
  });
});

describe('entriesByRank', () => {
  /** What the build sorted by before: the doc's rank, then the entry. */
  const bySort = (entryDoc: number[], rank: Uint32Array) =>
    [...entryDoc.keys()].sort((a, b) => rank[entryDoc[a]!]! - rank[entryDoc[b]!]! || a - b);

  it('orders entries as sorting by their doc rank, then by entry, does', () => {
    let seed = 3;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % n;
    };
    // Docs of one to four entries, ranked by a shuffled permutation, then by ranks with ties.
    const entryDoc: number[] = [];
    for (let doc = 0; doc < 5000; doc++) for (let k = 1 + next(4); k > 0; k--) entryDoc.push(doc);
    const places = Uint32Array.from({ length: 5000 }, (_, i) => i);
    for (let i = places.length - 1; i > 0; i--) {
      const j = next(i + 1);
      [places[i], places[j]] = [places[j]!, places[i]!];
    }
    const tied = Uint32Array.from({ length: 5000 }, () => next(50));
    for (const rank of [places, tied])
      expect([...entriesByRank(entryDoc, rank)]).toEqual(bySort(entryDoc, rank));
  });

  it('sorts by comparison when ranks run far past the entries', () => {
    const entryDoc = [0, 0, 1, 2, 2, 3];
    const rank = Uint32Array.from([4e9, 7, 4e9, 0]);
    expect([...entriesByRank(entryDoc, rank)]).toEqual(bySort(entryDoc, rank));
    expect([...entriesByRank([], rank)]).toEqual([]);
  });
});

describe('WordIndexBuilder', () => {
  it('reads the names doc by doc, as rows come, into the index a build of them all makes', async () => {
    const names = Array.from({ length: 500 }, (_, i) =>
      i % 3 === 0
        ? [NAMES[i % NAMES.length]!, `${NAMES[(i + 1) % NAMES.length]} ${i}`]
        : [NAMES[i % NAMES.length]!],
    );
    const rank = Uint32Array.from(names, (_, i) => (i * 7) % names.length);
    const read = new WordIndexBuilder();
    for (const n of names) read.add(n);
    const fromRows = await (await WordIndex.start(read)).finish(rank);
    const whole = await WordIndex.build(names, rank);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'word-index-'));
    try {
      const saved = async (index: WordIndex, name: string) => {
        const w = new SnapshotWriter();
        index.writeTo(w);
        await w.save(path.join(dir, name), 'k');
        return fs.readFileSync(path.join(dir, name));
      };
      expect((await saved(fromRows, 'rows')).equals(await saved(whole, 'whole'))).toBe(true);
      expect(fromRows.entriesOf(499)).toEqual(whole.entriesOf(499));
      expect(fromRows.vocabularySize).toBeGreaterThan(10);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('WordIndex.typoWords', () => {
  let index: WordIndex;
  beforeAll(async () => {
    index = await build(NAMES);
  });
  // The names' words and the acronyms derived from them, sorted: the vocabulary's ids.
  const vocab = [...new Set(NAMES.flatMap((n) => [...wordsOf(n), ...acronymsOf(wordsOf(n))]))].sort();

  it('gives the typo words of a vocabulary word, looked up, as a search for them finds', () => {
    let found = 0;
    for (const word of vocab) {
      expect(index.idOf(word)).toBeGreaterThanOrEqual(0);
      const got = [...index.typoWords(word)].sort((a, b) => a - b);
      expect({ word, got }).toEqual({ word, got: withinEdits(word, vocab) });
      found += got.length;
    }
    // Not vacuous: nordic/nordik/nordics, semiconductor(s)/semikonductor, pacific/pacifico, ...
    expect(found).toBeGreaterThan(10);
  });

  it('searches for the typo words of a word no name has', () => {
    for (const word of ['nordig', 'semiconductr', 'castngs', 'acme', 'xyzzy']) {
      const got = [...index.typoWords(word)].sort((a, b) => a - b);
      expect({ word, got }).toEqual({ word, got: withinEdits(word, vocab) });
    }
    expect([...index.typoWords('nordig')].map((id) => vocab[id])).toEqual(
      expect.arrayContaining(['nordic', 'nordik']),
    );
  });
});

describe('matchEntry', () => {
  let index: WordIndex;
  beforeAll(async () => {
    index = await build(NAMES);
  });

  it('counts a name word that a query word may be a typo of as 0.7 of a word', () => {
    const [name] = index.entriesOf(0); // Nordic Steel Works
    // "nordc" is one letter short of "nordic"; "works" is the name's own word.
    expect(matchEntry(planQuery('nordc works', index), index, name).coverage).toBeCloseTo(0.85, 10);
    expect(matchEntry(planQuery('steel works', index), index, name).coverage).toBe(1);
    // Two letters off in a short word is no typo.
    expect(matchEntry(planQuery('nrdc works', index), index, name).coverage).toBe(0.5);
    // "wroks" swaps two letters of "works", on the second query word.
    expect(matchEntry(planQuery('nordic wroks', index), index, name).coverage).toBeCloseTo(0.85, 10);
  });
});

import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import { WordIndex } from '../../src/search/word-index';
import type { SearchRow } from '../../src/domain/search-row';
import { SnapshotReader, SnapshotWriter } from '../../src/store/snapshot';
import { buildSearchRow } from '../support/factories';

/** Names in importance order: doc i is the i-th most important. */
const NAMES = [
  'Borealis Cables Industries',
  'Borealis Cables Ltd',
  'Borealis Cables',
  'Nordic Borealis Cables',
  'Borealis',
  'Ltd Co',
  'Borealis Cable',
];

const build = (names: readonly string[], sliceMs?: number) =>
  WordIndex.build(
    names.map((n) => [n]),
    Uint32Array.from(names, (_, i) => i),
    sliceMs,
  );

/** The docs of the entries listed under the words, as a reader takes them (checked, each once). */
function docsBeginning(index: WordIndex, words: string[]): number[] {
  const ids = words.map((w) => index.idOf(w));
  const docs: number[] = [];
  for (const entry of index.namesBeginning(ids)) {
    const doc = index.entryDoc[entry]!;
    if (index.beginsWith(entry, ids) && !docs.includes(doc)) docs.push(doc);
  }
  return docs;
}

describe('names by how they begin', () => {
  let index: WordIndex;
  beforeAll(async () => {
    index = await build(NAMES);
  });

  it('lists the names of exactly those words first, legal forms aside, then longer ones, each most important first', () => {
    expect(docsBeginning(index, ['borealis', 'cables'])).toEqual([1, 2, 0]);
    expect(docsBeginning(index, ['borealis'])).toEqual([4, 1, 2, 6, 0]);
    expect(docsBeginning(index, ['borealis', 'cables', 'industries'])).toEqual([0]);
  });

  it('orders names by how many words follow the beginning, past 127 of them', async () => {
    // The more important name has 129 words after "aa", the other 100: fewer words after come first.
    const words = (n: number) => Array.from({ length: n }, (_, k) => `w${k}`).join(' ');
    const long = await build([`aa ${words(129)}`, `aa ${words(100)}`]);
    expect(docsBeginning(long, ['aa'])).toEqual([1, 0]);
  });

  it('keeps, with a range of word ids, the names whose next word is in it (a typed beginning)', () => {
    const docsThen = (words: string[], beginning: string) => {
      const ids = words.map((w) => index.idOf(w));
      const next = index.prefixRange(beginning);
      const docs = new Set<number>();
      for (const entry of index.namesBeginning(ids))
        if (index.beginsWith(entry, ids, next)) docs.add(index.entryDoc[entry]!);
      return [...docs];
    };
    expect(docsThen(['borealis'], 'cab')).toEqual([1, 2, 6, 0]);
    expect(docsThen(['borealis'], 'cables')).toEqual([1, 2, 0]);
    expect(docsThen(['borealis', 'cables'], 'ind')).toEqual([0]);
    expect(docsThen(['borealis'], 'ind')).toEqual([]);
  });

  it('lists a name made only of legal forms under its words', () => {
    expect(docsBeginning(index, ['ltd', 'co'])).toEqual([5]);
    expect(docsBeginning(index, ['ltd'])).toEqual([5]);
  });

  it('lists nothing under words no name begins with', () => {
    expect(docsBeginning(index, ['cables'])).toEqual([]);
    expect(docsBeginning(index, ['cables', 'borealis'])).toEqual([]);
    expect(index.namesBeginning([])).toHaveLength(0);
  });

  it('reads back the same lists from a snapshot, and builds them alike in slices', async () => {
    const w = new SnapshotWriter();
    index.writeTo(w);
    const read = WordIndex.readFrom(SnapshotReader.fromShared(w.toShared()))!;
    const sliced = await build(NAMES, 0);
    for (const words of [['borealis', 'cables'], ['borealis'], ['ltd', 'co'], ['nordic']]) {
      const ids = words.map((word) => index.idOf(word));
      expect([...read.namesBeginning(ids)]).toEqual([...index.namesBeginning(ids)]);
      expect([...sliced.namesBeginning(ids)]).toEqual([...index.namesBeginning(ids)]);
    }
  });
});

describe('a relevance search among many names that share the query words', () => {
  /**
   * The company named by the query's words (and legal forms) is the best match, yet the least important
   * of those holding them: 120 names more similar by trigrams fill the trigram candidates, and 250 more
   * important companies holding both words further on in their names fill every budget of the words'
   * postings. One hub makes relationships count for little.
   */
  function rows(): SearchRow[] {
    const out: SearchRow[] = [buildSearchRow('hub', 'Zeta Hub', { degree: 1000 })];
    for (let i = 0; i < 120; i++) out.push(buildSearchRow(`near-${i}`, 'Borealis Cablesxy', { degree: 2 }));
    for (let i = 0; i < 250; i++) {
      out.push(buildSearchRow(`far-${i}`, 'Cables Borealis Holdings Group Worldwide Network', { degree: 3 }));
    }
    out.push(buildSearchRow('named', 'Borealis Cables Sdn Bhd', { degree: 1 }));
    return out;
  }

  const criteria = (name: string): SearchCriteria => ({
    name,
    minSimilarity: 0.3,
    includeSubsidiaries: false,
    limit: 10,
    offset: 0,
  });

  it('finds the company named by the query words first, as scoring every company does', async () => {
    const all = rows();
    const store = { scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(all)) };
    const index = await CompanySearchIndex.build(store);
    const exhaustive = index.searchExhaustive(criteria('Borealis Cables')).hits.map((h) => h.vid);
    expect(exhaustive[0]).toBe('named');
    const found = index.search(criteria('Borealis Cables')).hits.map((h) => h.vid);
    expect(found[0]).toBe('named');
    // With a typo in a word, read as the word it stands for.
    expect(index.search(criteria('Borealis Cablez')).hits[0]?.vid).toBe('named');
  });
});

describe('suggestions among many names that share the typed words', () => {
  /**
   * The company whose name begins with the typed words is the least important of those holding them:
   * 250 more important companies hold both words further on in their names and fill the budgets of the
   * words' postings.
   */
  function rows(): SearchRow[] {
    const out: SearchRow[] = [buildSearchRow('hub', 'Zeta Hub', { degree: 1000 })];
    for (let i = 0; i < 250; i++) {
      out.push(buildSearchRow(`far-${i}`, 'Cables Borealis Holdings Group Worldwide Network', { degree: 3 }));
    }
    out.push(buildSearchRow('named', 'Borealis Cables Sdn Bhd', { degree: 1 }));
    return out;
  }

  it('suggests the name that begins with the typed words, the last one typed in part or whole', async () => {
    const all = rows();
    const store = { scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(all)) };
    const index = await CompanySearchIndex.build(store);
    for (const typed of ['Borealis Cab', 'borealis cables'])
      expect(index.suggest(typed, 10, true)[0]?.vid).toBe('named');
  });

  const indexOf = (all: SearchRow[]) =>
    CompanySearchIndex.build({
      scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(all)),
    });

  it('reads the names of each word the last one begins, past many names of the first word alone', async () => {
    // 900 more important names begin with the first word and go on with another: more than a reading
    // of the first word's list takes in.
    const all = rows();
    for (let i = 0; i < 900; i++) all.push(buildSearchRow(`zinc-${i}`, 'Borealis Zinc', { degree: 2 }));
    const index = await indexOf(all);
    expect(index.suggest('Borealis Cab', 10, true)[0]?.vid).toBe('named');
  });

  it('takes first the names that hold the legal forms typed, among many of the same words', async () => {
    const all: SearchRow[] = [buildSearchRow('hub', 'Zeta Hub', { degree: 1000 })];
    for (let i = 0; i < 200; i++) all.push(buildSearchRow(`ltd-${i}`, 'Borealis Cables Ltd', { degree: 2 }));
    all.push(buildSearchRow('se', 'Borealis Cables SE', { degree: 1 }));
    const index = await indexOf(all);
    expect(index.suggest('Borealis Cables SE', 10, true)[0]?.vid).toBe('se');
  });
});

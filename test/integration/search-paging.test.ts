import fs from 'node:fs';
import path from 'node:path';
import { generateDataset } from '../../src/demo/generate';
import { stageImport } from '../../src/import/stage';
import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import { scanStagedSearchRows } from '../../src/store/staged-search-rows';
import { wordsOf } from '../../src/search/name-words';
import { tempDir } from '../support/paths';

/**
 * Pages of a relevance search are slices of one list (a ranking per window, see RELEVANCE_WINDOW):
 * following `next` neither repeats a company nor skips one, within a window or across its end, and the
 * first page does not change with `limit`. On the default demo dataset, with
 * queries whose candidates are drawn within budgets (several words, a wide beginning).
 */
describe('relevance search pages', () => {
  let dir: string;
  let index: CompanySearchIndex;
  beforeAll(async () => {
    dir = tempDir('search-paging');
    const input = path.join(dir, 'dataset');
    const staging = path.join(dir, 'staging');
    // The demo `npm start` seeds: 20,000 companies of seed 1.
    await generateDataset({ companies: 20_000, seed: 1, outDir: input });
    await stageImport(input, staging, {});
    index = await CompanySearchIndex.build({
      scanSearchRows: (onBatch) => scanStagedSearchRows(staging, onBatch),
    });
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('suggestions', () => {
    const holds = (name: string, words: readonly string[], begun: string) => {
      const own = wordsOf(name);
      return (
        words.every((w) => own.includes(w)) && own.some((w) => w.startsWith(begun) && !words.includes(w))
      );
    };
    it.each([
      ['nordwind cas', ['nordwind'], 'cas'],
      ['harbor pac', ['harbor'], 'pac'],
    ] as const)(
      '%s: the names holding every typed word come first, however unimportant',
      (q, words, begun) => {
        const got = index.suggest(q, 20, false).map((s) => s.matchedName ?? s.name);
        const full = got.filter((n) => holds(n, words, begun));
        expect(full.length).toBeGreaterThan(0);
        expect(got.slice(0, full.length)).toEqual(full);
      },
    );
    it('finds Jiangsu Nordwind Castings from its two words typed, the last cut short', () => {
      expect(index.suggest('nordwind cas', 20, false).map((s) => s.name)).toContain(
        'Jiangsu Nordwind Castings Co., Ltd.',
      );
    });
  });

  type Page = Partial<SearchCriteria> & { name: string; limit: number; offset: number };
  const search = (c: Page) => index.search({ minSimilarity: 0.3, includeSubsidiaries: false, ...c });
  const vids = (c: Page) => search(c).hits.map((h) => h.vid);
  // Several words, a wide beginning, a common word: queries whose candidates are drawn within budgets.
  const queries = [
    'nordwind castings ningbo',
    'crown electronics gmbh',
    'co',
    'Harbor Packaging Co., Ltd.',
    'steel',
  ];

  it.each(queries)(
    '%s: pages of 5 up to 20, a first page of 10, and pages within 40, are cut from one ranking each',
    (name) => {
      const whole = vids({ name, limit: 20, offset: 0 });
      expect(whole).toHaveLength(20);
      const paged: string[] = [];
      for (let offset = 0; offset < 20; offset += 5) paged.push(...vids({ name, limit: 5, offset }));
      expect(paged).toEqual(whole);
      expect(vids({ name, limit: 10, offset: 0 })).toEqual(whole.slice(0, 10));
      // The next window: pages that end past 20 and within 40 are cut from the list up to 40.
      const further = vids({ name, limit: 40, offset: 0 });
      expect([...vids({ name, limit: 10, offset: 20 }), ...vids({ name, limit: 10, offset: 30 })]).toEqual(
        further.slice(20, 40),
      );
    },
  );

  it.each(queries)(
    '%s: pages of 7 across the ends of 20, 40 and 80 list what one page of 100 lists, each company once',
    (name) => {
      const one = search({ name, limit: 100, offset: 0 });
      const whole = one.hits.map((h) => h.vid);
      expect(whole.length).toBeGreaterThan(60);
      expect(new Set(whole).size).toBe(whole.length);
      const paged: string[] = [];
      let more = true;
      for (let offset = 0; more && offset < 100; offset += 7) {
        const page = search({ name, limit: Math.min(7, 100 - offset), offset });
        paged.push(...page.hits.map((h) => h.vid));
        more = page.hasMore;
      }
      expect(paged).toEqual(whole);
      expect(more).toBe(one.hasMore);
      // And a page that starts where a stretch ends.
      expect(vids({ name, limit: 20, offset: 40 })).toEqual(whole.slice(40, 60));
    },
  );
});

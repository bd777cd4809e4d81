import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { CompanySearchIndex } from '../../src/search/company-search';
import { TrigramIndex } from '../../src/search/trigram-index';
import type { SearchSort } from '../../src/search/company-search';
import type { SearchRow } from '../../src/domain/search-row';
import { buildSearchRow } from '../support/factories';

const SUGGESTION_KEYS = [
  'country',
  'matchedName',
  'name',
  'relevance',
  'similarity',
  'vid',
  'wordSimilarity',
];

interface Labelled {
  query: string;
  vid: string;
  trap: string;
  country?: string;
  include_subsidiaries?: boolean;
}

const FIXTURES = join(__dirname, '..', 'fixtures');
const labelled = JSON.parse(readFileSync(join(FIXTURES, 'search-relevance.json'), 'utf8')) as {
  dataset: string;
  queries: Labelled[];
};

const csv = (file: string) =>
  parse<Record<string, string>>(readFileSync(join(FIXTURES, labelled.dataset, file), 'utf8'), {
    columns: true,
  });

/** The dataset's companies as the store would stream them after an import. */
function searchRows(): SearchRow[] {
  const degree = new Map<string, number>();
  for (const r of csv('relationships.csv')) {
    for (const vid of [r.supplier_id!, r.customer_id!]) degree.set(vid, (degree.get(vid) ?? 0) + 1);
  }
  const clusters = csv('clusters.csv');
  const size = new Map<string, number>();
  for (const c of clusters) size.set(c.cid_id!, (size.get(c.cid_id!) ?? 0) + 1);
  const membership = new Map(clusters.map((c) => [c.vid!, c]));
  return csv('companies.csv').map((c) => {
    const m = membership.get(c.vid!);
    return buildSearchRow(c.vid!, c.name!, {
      searchedByDefault: m === undefined || m.is_parent === 'true',
      isClusterParent: m !== undefined && m.is_parent === 'true' && size.get(m.cid_id!)! > 1,
      degree: degree.get(c.vid!) ?? 0,
      country: c.domiciled_country || null,
    });
  });
}

/** The index built from these rows, as a store streaming them would have it built. */
function indexOf(rows: SearchRow[]): Promise<CompanySearchIndex> {
  const store = { scanSearchRows: (onBatch: (r: SearchRow[]) => void) => Promise.resolve(onBatch(rows)) };
  return CompanySearchIndex.build(store);
}

/**
 * Holds `index.search` to `searchExhaustive` for every name at every [offset, limit], with the default
 * similarity threshold; gives how many hits were compared, for a test to check it compared enough.
 */
function hitsComparedWithExhaustive(
  index: CompanySearchIndex,
  names: readonly string[],
  pages: readonly (readonly [number, number])[],
): number {
  let compared = 0;
  for (const name of names) {
    for (const [offset, limit] of pages) {
      const c = { name, minSimilarity: 0.3, includeSubsidiaries: false, limit, offset };
      const every = index.searchExhaustive(c);
      expect({ name, offset, ...index.search(c) }).toEqual({ name, offset, ...every });
      compared += every.hits.length;
    }
  }
  return compared;
}

function topOne(index: CompanySearchIndex, q: Labelled, sort: SearchSort): string | undefined {
  const { hits } = index.search({
    name: q.query,
    minSimilarity: 0.3,
    includeSubsidiaries: q.include_subsidiaries ?? false,
    country: q.country,
    limit: 1,
    offset: 0,
    sort,
  });
  return hits[0]?.vid;
}

describe('search relevance on the labelled query set', () => {
  let index: CompanySearchIndex;
  beforeAll(async () => {
    index = await indexOf(searchRows());
  });

  it('finds the intended company first for at least 95% of the queries', () => {
    const misses = labelled.queries
      .map((q) => ({ ...q, got: topOne(index, q, 'relevance') }))
      .filter((q) => q.got !== q.vid);
    const accuracy = 1 - misses.length / labelled.queries.length;
    const pureOrder = labelled.queries.filter((q) => topOne(index, q, 'similarity') === q.vid).length;
    console.log(
      `top-1 accuracy: relevance ${(100 * accuracy).toFixed(1)}% ` +
        `(similarity order ${((100 * pureOrder) / labelled.queries.length).toFixed(1)}%) ` +
        `on ${labelled.queries.length} queries; misses: ${JSON.stringify(misses.map((m) => [m.query, m.vid, m.got ?? null]))}`,
    );
    expect(labelled.queries.length).toBeGreaterThanOrEqual(100);
    expect(accuracy).toBeGreaterThanOrEqual(0.95);
  });

  it('covers every kind of trap with several queries', () => {
    const traps = new Map<string, number>();
    for (const q of labelled.queries) traps.set(q.trap, (traps.get(q.trap) ?? 0) + 1);
    for (const trap of [
      'short query of a long legal name',
      'parent vs subsidiary',
      'acronym',
      'typo',
      'common words',
      'country',
    ]) {
      expect(traps.get(trap) ?? 0).toBeGreaterThanOrEqual(5);
    }
  });
});

describe('search candidates', () => {
  // 48 companies share "acme" and 30 "apex", more than a page and fewer than the candidate budgets
  // (a query word's holders: 40 beyond the page), with relationship counts spread so that importance
  // reorders the names.
  const words = ['Steel', 'Holdings', 'Chemicals', 'Logistics', 'Precision', 'Foods'];
  const rows: SearchRow[] = [];
  const add = (name: string, degree: number, parent = false) => {
    rows.push(buildSearchRow(`c${rows.length}`, name, { degree, isClusterParent: parent }));
  };
  for (let i = 0; i < 48; i++)
    add(`Acme ${words[i % 6]!} ${words[(i * 7) % 5]!} No ${i}`, (i * 37) % 101, i % 16 === 0);
  for (let i = 0; i < 30; i++) add(`Apex ${words[i % 6]!} Group`, (i * 13) % 41);
  for (let i = 0; i < 20; i++) add(`Zenith ${words[i % 6]!} ${i}`, i);

  it('are every match where there are fewer than the budgets: the order of scoring every company', async () => {
    const index = await indexOf(rows);
    const names = [
      'acme',
      'acme steel',
      'acme stel',
      'acm',
      'apex group',
      'apex',
      'zenith foods',
      'acme no 7',
    ];
    const compared = hitsComparedWithExhaustive(index, names, [
      [0, 10],
      [10, 10],
      [0, 50],
    ]);
    expect(compared).toBeGreaterThan(400);
  });

  it('include a company named by every query word that hundreds of more important ones hold one of', async () => {
    const many: SearchRow[] = [];
    const row = (vid: string, name: string, degree: number) => buildSearchRow(vid, name, { degree });
    const others = [
      'Forge',
      'Mining',
      'Textiles',
      'Foods',
      'Cables',
      'Optics',
      'Paper',
      'Motors',
      'Glass',
      'Rubber',
    ];
    for (let i = 0; i < 300; i++) many.push(row(`o${i}`, `Orion ${others[i % 10]!} ${i}`, 20 + (i % 40)));
    for (let i = 0; i < 300; i++) many.push(row(`s${i}`, `${others[i % 10]!} Steel ${i}`, 20 + (i % 40)));
    many.push(row('hub', 'Borealis Logistics', 5000));
    // Too long a name to reach similarity 0.3, and the least important of all.
    many.push(row('target', 'Orion Steel Holdings International Trading Company', 1));
    const index = await indexOf(many);
    const c = { name: 'orion steel', minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0 };
    const every = index.searchExhaustive(c);
    expect(every.hits[0]?.vid).toBe('target');
    expect(every.hits[0]!.similarity).toBeLessThan(0.3);
    expect(index.search(c)).toEqual(every);
  });

  it('give the page of scoring every company for one word, however many more important names hold it', async () => {
    const many: SearchRow[] = [];
    // 800 long names beginning with the word, all as important as the five short names that hold it
    // second and rank first by the formula; those five come last in importance order (vid), begin
    // with another word and are too unlike the query for the similar names (below 0.5).
    for (let i = 0; i < 800; i++)
      many.push(buildSearchRow(`a${1000 + i}`, `Vertex Alpha Beta Gamma Delta ${i}`, { degree: 5 }));
    for (let i = 0; i < 5; i++)
      many.push(buildSearchRow(`z${i}`, `Kr${'bcdfg'[i]}x Vertex Abc`, { degree: 5, aliases: [`Vtx ${i}`] }));
    // A subsidiary among them, and a hub holding the word's typo and a word it begins.
    many.push(buildSearchRow('zsub', 'Krzx Vertex Abd', { degree: 5, searchedByDefault: false }));
    many.push(buildSearchRow('hub', 'Vortex Vertexes Holdings GmbH', { degree: 400, isClusterParent: true }));
    const index = await indexOf(many);
    let compared = 0;
    for (const name of ['vertex', 'Vertex', 'verte', 'vertx', 'Vertex GmbH', 'vert']) {
      for (const includeSubsidiaries of [false, true]) {
        for (const [offset, limit] of [
          [0, 10],
          [3, 5],
          [0, 50],
        ] as const) {
          const c = { name, minSimilarity: 0.3, includeSubsidiaries, limit, offset };
          const every = index.searchExhaustive(c);
          expect({ name, offset, includeSubsidiaries, ...index.search(c) }).toEqual({
            name,
            offset,
            includeSubsidiaries,
            ...every,
          });
          compared += every.hits.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
    const first = index.search({
      name: 'vertex',
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
    });
    // The five short names come right after the hub, before the long ones.
    expect(
      first.hits
        .slice(0, 6)
        .map((h) => h.vid)
        .sort(),
    ).toEqual(['hub', 'z0', 'z1', 'z2', 'z3', 'z4']);
  });

  it('give the page of scoring every company for two words, where names holding both outnumber the budgets', async () => {
    const many: SearchRow[] = [];
    const row = (vid: string, name: string, degree: number) => buildSearchRow(vid, name, { degree });
    many.push(row('hub', 'Omega Hub', 1000));
    // Important names holding one word each: the best bounds of each word's own list.
    for (let i = 0; i < 60; i++) many.push(row(`z${100 + i}`, `Alpha Zeta${i}`, 900));
    for (let i = 0; i < 60; i++) many.push(row(`e${100 + i}`, `Beta Eta${i}`, 900));
    // 150 long names beginning with both words, more important than one the formula ranks first.
    for (let i = 0; i < 150; i++) many.push(row(`l${1000 + i}`, `Alpha Beta Kappa Lambda Mu Nu${i}`, 19));
    // Those: both words, not at the beginning, shorter, a little less important.
    for (let i = 0; i < 8; i++) many.push(row(`t${i}`, `Alpha Gam${'bcdfghjk'[i]}a Beta`, 12));
    const index = await indexOf(many);
    const names = ['alpha beta', 'Alpha Beta GmbH', 'alpha bet', 'alpha betta', 'beta alpha'];
    const compared = hitsComparedWithExhaustive(index, names, [
      [0, 10],
      [4, 5],
      [0, 30],
    ]);
    expect(compared).toBeGreaterThan(200);
    // One of those comes first, where neither the names beginning with the words, nor the most
    // important holders of both, nor the best bounds of each word's list reach it.
    const first = index.search({
      name: 'alpha beta',
      minSimilarity: 0.3,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
    });
    expect(first.hits[0]!.vid).toMatch(/^t/);
  });

  it('reach a name made only of legal forms, which a word meets through them', async () => {
    const many: SearchRow[] = [];
    // "corpo" begins the legal form "corporation", and "sp" the acronym SPA (also a legal form): a name
    // of nothing else is matched on them, and here ranks first by similarity.
    many.push(buildSearchRow('corp', 'Corporation', { degree: 0 }));
    many.push(buildSearchRow('sunpower', 'Sun Power Alliance', { degree: 0 }));
    for (let i = 0; i < 5; i++) {
      many.push(buildSearchRow(`co${i}`, `Corporal Xyzzy ${i}`, { degree: 0 }));
      many.push(buildSearchRow(`sp${i}`, `Spx${'abcde'[i]!}`, { degree: 0 }));
    }
    // Names holding the legal forms beside other words, which those words cannot meet.
    for (let i = 0; i < 20; i++)
      many.push(buildSearchRow(`l${i}`, `Lumen ${i} Corporation SpA`, { degree: 9 }));
    const index = await indexOf(many);
    for (const [name, first] of [
      ['corpo', 'corp'],
      ['sp', 'sunpower'],
    ] as const) {
      for (const minSimilarity of [0, 0.3]) {
        for (const limit of [1, 5]) {
          const c = { name, minSimilarity, includeSubsidiaries: false, limit, offset: 0 };
          const every = index.searchExhaustive(c);
          expect(every.hits[0]?.vid).toBe(first);
          expect({ name, minSimilarity, limit, ...index.search(c) }).toEqual({
            name,
            minSimilarity,
            limit,
            ...every,
          });
        }
      }
    }
  });

  it('take the holders of a common word that can rank highest when the query has other words', async () => {
    const many: SearchRow[] = [];
    // As above: 800 long names of the word, all as important as five short ones that rank above them
    // and come last in importance order. The query's other word is in no name, so only the word's
    // postings can find the five: more than the budget of them, read most important first, would not.
    for (let i = 0; i < 800; i++)
      many.push(buildSearchRow(`a${1000 + i}`, `Vertex Alpha Beta Gamma Delta ${i}`, { degree: 5 }));
    for (let i = 0; i < 5; i++)
      many.push(buildSearchRow(`z${i}`, `Kr${'bcdfg'[i]}x Vertex Abc`, { degree: 5 }));
    const index = await indexOf(many);
    for (const name of ['qqqqq vertex', 'qqqqq vertex gmbh', 'vertex qqqqq']) {
      const c = { name, minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0 };
      const every = index.searchExhaustive(c);
      // The five first, unless the query's first word is the one the long names begin with.
      if (name.startsWith('qqqqq'))
        expect(
          every.hits
            .slice(0, 5)
            .map((h) => h.vid)
            .sort(),
        ).toEqual(['z0', 'z1', 'z2', 'z3', 'z4']);
      expect({ name, ...index.search(c) }).toEqual({ name, ...every });
    }
  });

  it('reach companies by a word beginning that more than a thousand vocabulary words share', async () => {
    const many: SearchRow[] = [];
    // 1,200 words beginning with "q" (more than are merged posting by posting), so a typed "q" is
    // looked for among the most important companies; 3,000 more important ones have no such word.
    for (let i = 0; i < 1200; i++) many.push(buildSearchRow(`q${i}`, `Qw${i} Trading`, { degree: i % 40 }));
    for (let i = 0; i < 3000; i++)
      many.push(buildSearchRow(`o${i}`, `Orion Forge ${i}`, { degree: 100 + (i % 50) }));
    many.push(buildSearchRow('quasar', 'Quasar Holdings', { degree: 90 }));
    const index = await indexOf(many);
    const found = index.suggest('q', 5, false);
    expect(found.map((s) => s.vid)[0]).toBe('quasar');
    expect(found).toHaveLength(5);
    for (const s of found) expect(s.name).toMatch(/^Q/);
    // A box shows suggestions by name and country: the company's other fields are neither read nor sent between threads.
    for (const s of found) expect(Object.keys(s).sort()).toEqual(SUGGESTION_KEYS);
    // After it, the most important of the rest (40 relationships less one).
    for (const s of found.slice(1)) expect(Number(s.vid.slice(1)) % 40).toBe(39);
  });

  it('read the names beginning with the words before one that no name has', async () => {
    const many: SearchRow[] = [];
    // 200 names holding both known words, more important than the target and so read before it in
    // each word's list and among the names holding both, fill the budgets of the word stages; a
    // threshold above the target's similarity keeps the similar names from it.
    many.push(buildSearchRow('hub', 'Borealis Logistics', { degree: 10_000 }));
    for (let i = 0; i < 200; i++)
      many.push(buildSearchRow(`d${i}`, `Crown Castings Foundry ${i}`, { degree: 2 }));
    many.push(buildSearchRow('target', 'Crown Castings', { degree: 0 }));
    const index = await indexOf(many);
    // "rtd" is no word of any name, nor a typo of one (legal forms such as "ltd" are not typo words).
    const c = {
      name: 'Crown Castings rtd',
      minSimilarity: 0.9,
      includeSubsidiaries: false,
      limit: 10,
      offset: 0,
    };
    const every = index.searchExhaustive(c);
    expect(every.hits[0]?.vid).toBe('target');
    expect(every.hits[0]!.similarity).toBeLessThan(0.9);
    expect(index.search(c)).toEqual(every);
  });

  it('draw no names by similarity where the words give a page no such name can enter', async () => {
    // Three words: a search of one or two words reads its names by bound instead of within budgets.
    const many: SearchRow[] = [];
    many.push(buildSearchRow('hub', 'Borealis Logistics', { degree: 500 }));
    for (let i = 0; i < 15; i++) many.push(buildSearchRow(`a${i}`, 'Acme Widgets Group', { degree: 10 + i }));
    for (let i = 0; i < 40; i++)
      many.push(buildSearchRow(`w${i}`, `Acme Widgetz Group ${i}`, { degree: 20 }));
    const index = await indexOf(many);
    const similar = jest.spyOn(TrigramIndex.prototype, 'search');
    try {
      const strong = {
        name: 'acme widgets group',
        minSimilarity: 0.3,
        includeSubsidiaries: false,
        limit: 10,
        offset: 0,
      };
      const page = index.search(strong);
      expect(similar).not.toHaveBeenCalled();
      expect(page.hits.map((h) => h.vid).every((vid) => vid.startsWith('a'))).toBe(true);
      expect(page).toEqual(index.searchExhaustive(strong));
      // A word with two typos is met by no word of a name: the names meet half the query, the page is
      // weak, and the similar names are drawn too (a search of the whole query's text; a word outside
      // the vocabulary also searches the vocabulary's trigrams for its typos).
      const weak = { ...strong, name: 'acme wigdetzz group' };
      const found = index.search(weak);
      expect(similar.mock.calls.some(([text]) => text === 'acme wigdetzz group')).toBe(true);
      expect(found.hits).toHaveLength(10);
      expect(found).toEqual(index.searchExhaustive(weak));
      // Two words read by bound: the similar names only where one could enter the page.
      for (const name of ['acme widgets', 'acme wigdetzz']) {
        const two = { ...strong, name };
        expect(index.search(two)).toEqual(index.searchExhaustive(two));
      }
    } finally {
      similar.mockRestore();
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { SearchRow } from '../../src/domain/search-row';
import { CompanySearchIndex, SearchIndexBuilder } from '../../src/search/company-search';
import { buildKeyedSearchRow } from '../support/factories';
import { tempDir } from '../support/paths';

const WORDS = ['Acme', 'Bolt', 'Castings', 'Delta', 'Steel', 'Nordic'];

/** Companies whose counts differ from one to the next, their degree the sum of supplier and customer counts. */
function rows(): SearchRow[] {
  return Array.from({ length: 500 }, (_, i) => {
    const r = buildKeyedSearchRow(i, `${WORDS[i % 6]} ${WORDS[(i * 5 + 1) % 6]} ${i}`, `Trading ${i}`, [
      'DE',
      null,
    ]);
    const suppliers = (i * 7) % 13;
    const customers = (i * 3) % 11;
    r.core = {
      ...r.core,
      count_suppliers: suppliers,
      count_customers: customers,
      count_supplier_evidence: suppliers * 2 + (i % 3),
      count_customer_evidence: customers * 4,
      company_legal_name: i % 2 === 0 ? `${r.name} "Legal", [Ltd]` : null,
    };
    r.degree = suppliers + customers;
    return r;
  });
}

/** The rows as an import hands them over before counting: counts and degree unknown. */
const uncounted = (r: SearchRow): SearchRow => ({
  ...r,
  degree: 0,
  core: {
    ...r.core,
    count_suppliers: 0,
    count_customers: 0,
    count_supplier_evidence: 0,
    count_customer_evidence: 0,
  },
});

/** The four counts of the rows, in their order, as an import derives them. */
const countsOf = (all: readonly SearchRow[]) => ({
  suppliers: Int32Array.from(all, (r) => r.core.count_suppliers),
  customers: Int32Array.from(all, (r) => r.core.count_customers),
  supplierEvidence: Float64Array.from(all, (r) => r.core.count_supplier_evidence),
  customerEvidence: Float64Array.from(all, (r) => r.core.count_customer_evidence),
});

/** A builder given every row without its counts, then the counts: the build the others are held to. */
function countedAtOnce(all: SearchRow[], counts: ReturnType<typeof countsOf>): SearchIndexBuilder {
  const b = new SearchIndexBuilder();
  b.addUncounted(all.map(uncounted));
  b.setCounts(counts);
  return b;
}

describe('SearchIndexBuilder', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir('index-builder')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('builds from rows without their counts, then the counts, the index of the whole rows', async () => {
    const all = rows();
    const whole = new SearchIndexBuilder();
    whole.add(all.slice(0, 200));
    whole.add(all.slice(200));
    const later = new SearchIndexBuilder();
    later.addUncounted(all.slice(0, 300).map(uncounted));
    later.addUncounted(all.slice(300).map(uncounted));
    later.setCounts(countsOf(all));
    const a = await CompanySearchIndex.finish(whole);
    const b = await CompanySearchIndex.finish(later);
    await a.save(path.join(dir, 'whole'), 'k');
    await b.save(path.join(dir, 'later'), 'k');
    expect(fs.readFileSync(path.join(dir, 'later')).equals(fs.readFileSync(path.join(dir, 'whole')))).toBe(
      true,
    );
    const hits = b.search({
      name: 'acme bolt',
      limit: 3,
      offset: 0,
      minSimilarity: 0.3,
      includeSubsidiaries: true,
    });
    expect(hits.hits[0]!.core).toEqual(all.find((r) => r.vid === hits.hits[0]!.vid)!.core);
  });

  it('makes what needs no counts before they come, for the same index, and then takes no more rows', async () => {
    const all = rows();
    const counts = countsOf(all);
    const plain = countedAtOnce(all, counts);
    const prepared = new SearchIndexBuilder();
    prepared.addUncounted(all.slice(0, 250).map(uncounted));
    prepared.addUncounted(all.slice(250).map(uncounted));
    prepared.prepare();
    expect(() => prepared.addUncounted(all.slice(0, 1).map(uncounted))).toThrow(
      'companies added after the index was begun',
    );
    // Made once: the parts made before the counts are those the index holds, the word index
    // (begun then, its typo words found meanwhile) among them.
    const trigrams = prepared.uncountedParts.trigrams();
    const words = prepared.startWords();
    prepared.setCounts(counts);
    const index = await CompanySearchIndex.finish(prepared);
    expect(prepared.uncountedParts.trigrams()).toBe(trigrams);
    expect(prepared.startWords()).toBe(words);
    await (await CompanySearchIndex.finish(plain)).save(path.join(dir, 'plain'), 'k');
    await index.save(path.join(dir, 'prepared'), 'k');
    expect(fs.readFileSync(path.join(dir, 'prepared')).equals(fs.readFileSync(path.join(dir, 'plain')))).toBe(
      true,
    );
    expect(
      index.search({
        name: 'delta steel',
        limit: 1,
        offset: 0,
        minSimilarity: 0.3,
        includeSubsidiaries: true,
      }).hits,
    ).toHaveLength(1);
  });

  it('takes the names ahead of the rows, for the same index, and refuses rows named otherwise', async () => {
    const all = rows();
    const counts = countsOf(all);
    const plain = countedAtOnce(all, counts);
    const named = new SearchIndexBuilder();
    const names = all.map((r) => ({ name: r.name, aliases: r.aliases }));
    named.addNames(names.slice(0, 100));
    // Rows may catch up with the names and pass them.
    named.addUncounted(all.slice(0, 60).map(uncounted));
    named.addNames(names.slice(100, 400));
    named.addUncounted(all.slice(60, 450).map(uncounted));
    named.addUncounted(all.slice(450).map(uncounted));
    named.setCounts(counts);
    await (await CompanySearchIndex.finish(plain)).save(path.join(dir, 'plain'), 'k');
    await (await CompanySearchIndex.finish(named)).save(path.join(dir, 'named'), 'k');
    expect(fs.readFileSync(path.join(dir, 'named')).equals(fs.readFileSync(path.join(dir, 'plain')))).toBe(
      true,
    );

    const other = new SearchIndexBuilder();
    other.addNames(names.slice(0, 2));
    expect(() => other.addUncounted(all.slice(1, 2).map(uncounted))).toThrow(
      `company 0 is named "${all[1]!.name}", its name given ahead "${all[0]!.name}"`,
    );
    // Names of companies whose rows never came: no index.
    const ahead = new SearchIndexBuilder();
    ahead.addNames(names.slice(0, 3));
    ahead.addUncounted(all.slice(0, 2).map(uncounted));
    expect(() => ahead.prepare()).toThrow('names of 3 companies given for 2 added');
    const counted = new SearchIndexBuilder();
    counted.add(all.slice(0, 1));
    expect(() => counted.addNames(names.slice(1, 2))).toThrow(
      'a search index is built from rows with their counts or without, not both',
    );
  });

  it('refuses counts of another number of companies, rows of both kinds, and an index without its counts', async () => {
    const all = rows();
    const counts = (n: number) => ({
      suppliers: new Int32Array(n),
      customers: new Int32Array(n),
      supplierEvidence: new Float64Array(n),
      customerEvidence: new Float64Array(n),
    });
    const b = new SearchIndexBuilder();
    b.addUncounted(all.slice(0, 10).map(uncounted));
    expect(() => b.setCounts(counts(9))).toThrow('counts of 9 companies for 10 added');
    expect(() => b.add(all.slice(10, 11))).toThrow('with their counts or without, not both');
    await expect(CompanySearchIndex.finish(b)).rejects.toThrow('needs the counts of its companies');
    b.setCounts(counts(10));
    expect(() => b.addUncounted(all.slice(10, 11))).toThrow('companies added after their counts');
    const whole = new SearchIndexBuilder();
    whole.add(all.slice(0, 10));
    expect(() => whole.setCounts(counts(10))).toThrow('for companies added without their counts');
  });

  it('takes the empty counts of an import of no company, and makes an empty index', async () => {
    const none = new SearchIndexBuilder();
    none.setCounts(countsOf([]));
    const index = await CompanySearchIndex.finish(none);
    expect(index.size).toBe(0);
    // As an import's build thread has it: the count-free parts made before the counts come.
    const prepared = new SearchIndexBuilder();
    prepared.prepare();
    prepared.setCounts(countsOf([]));
    expect((await CompanySearchIndex.finish(prepared)).size).toBe(0);
    expect(
      index.search({ name: 'acme', minSimilarity: 0.3, includeSubsidiaries: false, limit: 10, offset: 0 }),
    ).toEqual({
      hits: [],
      hasMore: false,
    });
  });
});

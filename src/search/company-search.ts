import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { countryCode } from '../domain/countries';
import { hostsOf } from '../domain/hosts';
import type { CompanyCore, CompanySummary } from '../domain/model';
import type { SearchName, SearchRow } from '../domain/search-row';
import { wordSimilarity, wordSimilarityOf } from '../domain/trigram';
import { PackedStrings } from '../store/packed-strings';
import { fnv1a } from '../store/string-hash';
import { KeyedLists, KeyedListsBuilder } from './keyed-lists';
import { coreOfRecord, coreRecord } from './core-record';
import type { CoreRecord } from './core-record';
import { PackedRecords, PackedRecordsBuilder } from './packed-records';
import { importanceOf, matchEntry, planQuery, relevanceOf } from './relevance';
import { WidePrefixes } from './wide-prefixes';
import { BoundLists, BoundReader, similarityBound } from './bound-lists';
import { PairLists } from './pair-lists';
import type { QueryPlan } from './relevance';
import { type PreparedQuery, TrigramIndex, TrigramIndexBuilder } from './trigram-index';
import { SnapshotReader, SnapshotWriter } from '../store/snapshot';
import type { SharedSnapshot } from '../store/snapshot';
import { WordIndex, WordIndexBuilder } from './word-index';
import type { TypoPriority } from './word-index';

/** What a search can ask for; every criterion given must match. */
export interface SearchCriteria {
  name?: string;
  /** pg_trgm's default threshold is 0.3. */
  minSimilarity: number;
  includeSubsidiaries: boolean;
  city?: string;
  /** Industry text, industry code, or `<code system>:<code>`, case-insensitive. */
  industry?: string;
  country?: string;
  website?: string;
  identifier?: string;
  limit: number;
  offset: number;
  /**
   * relevance (default): names containing the query's words or word beginnings are candidates too, and
   * the order is the documented relevance; similarity: the interface specification's order, pg_trgm
   * similarity >= minSimilarity, by similarity then relationships.
   */
  sort?: SearchSort;
}

export type SearchSort = 'relevance' | 'similarity';

/** A company's supplier or customer list, by its length. */
export interface LongList {
  vid: string;
  length: number;
}

export interface SearchHit {
  vid: string;
  /** float4 similarity to the name; null when no name was given. */
  similarity: number | null;
  /** float4 pg_trgm word_similarity(query, name); null when no name was given. */
  wordSimilarity: number | null;
  /** The name, alias or acronym the query matched best; null when no name was given. */
  matchedName: string | null;
  /** Relevance (see relevance.ts); null when no name was given or when sorted by similarity. */
  relevance: number | null;
  /** The company's search-result fields, as the store held them when the index was built. */
  core: CompanyCore;
}

/**
 * A suggestion for a search box: a hit without its company's fields (neither read nor sent between
 * threads), but with the name and country a box shows.
 */
export type Suggestion = Omit<SearchHit, 'core'> & { name: string; country: string | null };

const fold = (s: string) => s.trim().toLowerCase();

/**
 * City key of the index: folded, and without accents or other marks, so that "Istanbul" finds
 * "İstanbul" and "Zurich" "Zürich", as a country is found however it is spelt.
 */
const cityKey = (s: string) => fold(s).normalize('NFD').replace(/\p{M}/gu, '');

/** Country key of the index: the ISO alpha-2 code when the value names a country, else the folded text. */
const countryKey = (value: string) => countryCode(value) ?? fold(value);

/**
 * Candidates per query word a search of several words takes from the word postings beyond the page
 * asked for, in the order of the relevance each name can reach (see BoundLists): for a first page of
 * 10, 50 so taken give as many of the formula's pages at 1M companies as 200 taken most important
 * first, for about a tenth less time a search (bench/README.md, 2026-11-30).
 */
const SEARCH_BUDGET = 40;
/** The same for suggestions, which must answer in a few milliseconds. */
const SUGGEST_BUDGET = 150;
/**
 * Candidates a search takes, before those, among companies whose one name holds two or more of the
 * query's words (most important first, from the postings of the rarest word); and how many of those
 * postings it reads at most.
 */
const MULTI_WORD_BUDGET = 50;
const MULTI_WORD_READS = 1000;
/**
 * A beginning spanning more vocabulary words than this ("co" spans tens of thousands at a million
 * companies) is matched by reading companies most important first rather than by merging postings.
 */
const MERGE_WORDS = 1000;
/** Companies read, most important first, for such a beginning. */
const SCAN_LIMIT = 50_000;
/**
 * Companies kept per wide beginning, the first such a read would take: more than a search's budget
 * (SEARCH_BUDGET, SUGGEST_BUDGET), so that a read goes on past them only for pages far down the list or
 * for filters that refuse many companies.
 */
const WIDE_KEEP = 256;
/** Layout of a saved index; a snapshot of another version is rebuilt instead of read. */
const SNAPSHOT_VERSION = 12;
/** Candidates whose trigram rows are read ahead at once when scoring (see CompanySearchIndex.readAhead). */
const READ_AHEAD_BLOCK = 8;
/**
 * Extra trigram matches a relevance search reads beyond the page, for relevance to reorder, among the
 * names of similarity TRIGRAM_FLOOR or more (see rankRelevant). Before names were drawn by how they
 * begin (LEAD_BUDGET) it read 100 down to the threshold; the two settings below find more of the page
 * that scoring every company gives, for less time (bench/README.md).
 */
const TRIGRAM_EXTRA = 30;
const TRIGRAM_FLOOR = 0.5;
/**
 * A search that draws its candidates within budgets (one of several words, or of one word past the
 * limits of searchOneWord) draws names by similarity (similarNames) only when the relevance of the
 * first match after the page its other candidates give is below this. A name that meets none of the
 * query's words reaches at most 0.5 + 0.025 (both similarities, the highest importance, legal forms);
 * one that meets some of them is the word stages' to find. Over the bench's terms at 1M companies
 * this skips the stage for three searches of several words in five and gives as many of the pages
 * that scoring every company gives (bench/README.md).
 */
const SIMILAR_BELOW = 0.65;
/**
 * The smallest stretch of a relevance ranking a search draws its candidates for. Candidates are drawn
 * within budgets that grow with how far down the list a page ends, so two pages drawn for different
 * ends rank different candidates: a next page would repeat companies of the page before and skip
 * others, and a first page would change with `limit`. So the list is made of windows: the first
 * RELEVANCE_WINDOW of the ranking drawn for it, then up to twice as far the ranking drawn for that
 * window less the companies listed before, and so on (relevancePage). Every page is cut from that one
 * list; one past the first window ranks every window up to its own, about twice the work of ranking
 * the last alone (1.25 ms against 0.75 for a page within 40 at 1M companies; 4.5 against 2.1 within
 * 160). Where a window's draw finds a company the one before missed, it is listed after the
 * window before, below companies of less relevance. The one-word and two-word searches rank their
 * word matches exactly, so only their similar names are drawn for the window.
 * 20 costs a search about 8% more CPU at 1M companies than drawing for the page; 50 cost 23–60%
 * (bench/README.md, 2026-11-30, night).
 */
const RELEVANCE_WINDOW = 20;

/** How far down the ranking the candidates of a relevance search's page are drawn: see RELEVANCE_WINDOW. */
function drawnTo(c: SearchCriteria): number {
  const end = c.offset + c.limit;
  let window = RELEVANCE_WINDOW;
  while (window < end) window *= 2;
  return window;
}

/**
 * Candidates a search takes among the names that begin with the query's words (each as typed or as a
 * typo word): those named by exactly the query's words first (see LeadLists).
 */
const LEAD_BUDGET = 300;
/** Readings of the query's words (each word as typed or as one of its typo words) looked up at most. */
const LEAD_READINGS = 64;
/**
 * Candidates a suggestion takes among the names that begin with the words typed before the last and
 * whose next word begins with the last (see CompanySearchIndex.suggest).
 */
const SUGGEST_LEAD_BUDGET = 40;
/**
 * Words a last word being typed may begin that a suggestion reads the lists of, one by one; past that
 * many it reads the list of the words before it, for names whose next word it begins.
 */
const TYPED_WORDS_READ = 16;
/**
 * Limits of a one-word search (see CompanySearchIndex.searchOneWord): words a query word may begin, the
 * bands of the lists it reads, and postings read. Past one, candidates are drawn within budgets. At 1M
 * companies the bench's one-word terms read 82 postings at the median, 554 at the 99th percentile.
 */
const BOUNDED_PREFIX_WORDS = 512;
const BOUNDED_CURSORS = 4096;
const BOUNDED_READS = 2000;
/**
 * Limits of a two-word search (see CompanySearchIndex.searchTwoWords): pairs of readings looked up,
 * and postings read. A search past the reads falls back to the budgets, having spent them: at 1M
 * companies 500 leaves 55 of the bench's 674 two-word terms to the budgets and costs least in all
 * (300: 78 left; 1,000: 46, a tenth more time; 2,000: 40, a quarter more).
 */
const BOUNDED_PAIR_LOOKUPS = 4096;
const BOUNDED_PAIR_READS = 500;

/**
 * What a bounded read adds to every posting's bound for the parts of relevance no list orders: word
 * similarity at most 1, and the legal forms typed, which the name may hold.
 */
function boundConstant(plan: QueryPlan): number {
  return 0.1 + (plan.legalIds.length > 0 ? 0.025 : 0);
}

/** A candidate of {@link CompanySearchIndex.best} with a bound of its relevance. */
interface Pending {
  doc: number;
  /** Its similarity: from the trigram stage, or once the bound is tight. */
  sim: number | null;
  entry: number;
  match: number;
  coverage: number;
  importance: number;
  bound: number;
  /** Whether `bound` takes the trigram overlap into account. */
  tight: boolean;
}

/** A max-heap of candidates by bound. */
class BoundHeap {
  private readonly items: Pending[] = [];

  peek(): Pending | undefined {
    return this.items[0];
  }

  pop(): Pending | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const head = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      this.down(0);
    }
    return head;
  }

  push(item: Pending): void {
    const items = this.items;
    let i = items.push(item) - 1;
    while (i > 0) {
      const up = (i - 1) >>> 1;
      if (items[up]!.bound >= item.bound) break;
      items[i] = items[up]!;
      i = up;
    }
    items[i] = item;
  }

  private down(i: number): void {
    const items = this.items;
    const item = items[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && items[child + 1]!.bound > items[child]!.bound) child++;
      if (items[child]!.bound <= item.bound) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = item;
  }
}

interface Scored {
  doc: number;
  similarity: number;
  wordSimilarity: number;
  entry: number;
  relevance: number;
}

/**
 * The in-process company search index: trigram postings over names plus the
 * secondary keys the filters use. Built from the store at start-up and rebuilt
 * after an import; immutable once built, so searches need no locks.
 */
export class CompanySearchIndex {
  private constructor(
    private readonly vids: PackedStrings,
    private readonly names: TrigramIndex,
    private readonly degree: Int32Array,
    private readonly byDefault: Uint8Array,
    private readonly countryOf: Uint16Array,
    private readonly countries: Map<string, number>,
    private readonly byCity: KeyedLists,
    private readonly byIdentifier: KeyedLists,
    private readonly byHost: KeyedLists,
    private readonly byIndustry: KeyedLists,
    /** Docs ordered by degree desc, vid asc: the order of searches without a name. */
    private readonly byDegree: Uint32Array,
    private readonly words: WordIndex,
    private readonly names_: PackedStrings,
    private readonly parent: Uint8Array,
    private readonly maxDegree: number,
    /** Place of each doc in importance order (byDegree), 0 first. */
    private readonly rank: Uint32Array,
    /** Each doc's search-result fields, as a CoreRecord: a page of results needs no store read. */
    private readonly cores: PackedRecords,
    /** Each doc's country as the store holds it: 0 for none, else 1 + its place in `places`. */
    private readonly placeOf: Uint32Array,
    private readonly places: string[],
    /** Word postings in relevance-bound order, for one-word searches (see searchOneWord). */
    private readonly bounds: BoundLists,
    /** The names holding two words, in the same order, for two-word searches (see searchTwoWords). */
    private readonly pairs: PairLists,
  ) {
    this.docByVid = vidTable(vids);
    this.highestImportance = (maxDegree > 0 ? 0.8 : 0) + (parent.includes(1) ? 0.2 : 0);
    // The store may stream companies in any order, so doc numbers differ between two builds of the
    // same data; ties are settled by this instead, which only the data decides.
    const n = rank.length;
    // A plain loop: Uint32Array.from with a mapping function took some 130 ms at 1M companies.
    this.importance = new Uint32Array(n);
    for (let d = 0; d < n; d++) this.importance[d] = n - rank[d]!;
    this.widePrefixes = WidePrefixes.build(words, byDegree, {
      minWords: MERGE_WORDS,
      scanLimit: SCAN_LIMIT,
      keep: WIDE_KEEP,
    });
  }

  /** Reads the bound lists for one search at a time (searches run one at a time). */
  private get reader(): BoundReader {
    return (this.reader_ ??= new BoundReader(this.bounds, (id) => this.words.postingRange(id)));
  }

  private reader_: BoundReader | null = null;

  /** Reads the pair lists, beside {@link reader}, for a two-word search. */
  private get pairReader(): BoundReader {
    return (this.pairReader_ ??= new BoundReader(this.pairs.lists, (k) => this.pairs.rangeOf(k)));
  }

  private pairReader_: BoundReader | null = null;

  /** At least the importance of every company (see importanceOf). */
  private readonly highestImportance: number;

  /** The start of every scan for a wide word beginning, read once (see scanByImportance). */
  private readonly widePrefixes: WidePrefixes;

  /** n - rank: higher for the more important doc (more relationships, then the lower vid), all distinct. */
  private readonly importance: Uint32Array;

  /** Open-addressing table from a vid's hash to 1 + its doc (0: empty), for lookups by key. */
  private readonly docByVid: Int32Array;

  /** The doc of `vid`, or -1 when the index does not hold it. */
  private docOf(vid: string): number {
    const table = this.docByVid;
    const mask = table.length - 1;
    for (let slot = fnv1a(vid) & mask; ; slot = (slot + 1) & mask) {
      const entry = table[slot]!;
      if (entry === 0) return -1;
      if (this.vids.equals(entry - 1, vid)) return entry - 1;
    }
  }

  /**
   * Companies with at least `min` suppliers, and those with at least `min` customers, with the length
   * of that list: the lists long enough to be worth keeping the head of (see ListHeads).
   */
  longLists(min: number): Record<'suppliers' | 'customers', LongList[]> {
    const suppliers: LongList[] = [];
    const customers: LongList[] = [];
    for (const doc of this.byDegree) {
      // The degree is suppliers plus customers: below `min`, neither list can reach it.
      if (this.degree[doc]! < min) break;
      const c = this.coreOf(doc);
      if (c.count_suppliers >= min) suppliers.push({ vid: c.vid, length: c.count_suppliers });
      if (c.count_customers >= min) customers.push({ vid: c.vid, length: c.count_customers });
    }
    return { suppliers, customers };
  }

  /** Whether the company `vid` was in the store when the index was built. */
  has(vid: string): boolean {
    return this.docOf(vid) >= 0;
  }

  /**
   * The company's fields as a relationship list shows its counterpart, as the store held them when
   * the index was built (the same values as the store's company/get-summary); null when unknown.
   */
  summary(vid: string): CompanySummary | null {
    const doc = this.docOf(vid);
    if (doc < 0) return null;
    const c = this.coreOf(doc);
    return {
      vid: c.vid,
      name: c.name,
      company_legal_name: c.company_legal_name,
      description: c.description,
      domains: c.domains,
      country: this.countryName(doc),
      count_supplier_evidence: c.count_supplier_evidence,
      count_customer_evidence: c.count_customer_evidence,
      count_customers: c.count_customers,
      count_suppliers: c.count_suppliers,
    };
  }

  /** The country a relationship list shows for the company (its domiciled country); null when unknown. */
  private countryName(doc: number): string | null {
    const place = this.placeOf[doc]!;
    return place === 0 ? null : this.places[place - 1]!;
  }

  get size(): number {
    return this.vids.length;
  }

  /** Saves the index to `file` under `key` (see {@link CompanySearchIndex.load}; `opts`: SnapshotWriter.save). */
  save(file: string, key: string, opts?: { sync?: boolean }): Promise<void> {
    return this.snapshot().save(file, key, opts);
  }

  /** The index's arrays in shared memory, as loadShared gives them: for fromShared on any thread. */
  toShared(): SharedSnapshot {
    return this.snapshot().toShared();
  }

  private snapshot(): SnapshotWriter {
    const w = new SnapshotWriter();
    w.json({ version: SNAPSHOT_VERSION, maxDegree: this.maxDegree, countries: [...this.countries] });
    this.vids.writeTo(w);
    this.names_.writeTo(w);
    this.names.writeTo(w);
    w.array(this.degree).array(this.byDefault).array(this.countryOf);
    for (const lists of [this.byCity, this.byIdentifier, this.byHost, this.byIndustry]) lists.writeTo(w);
    w.array(this.byDegree).array(this.parent).array(this.rank);
    this.words.writeTo(w);
    this.cores.writeTo(w);
    w.array(this.placeOf).json(this.places);
    this.bounds.writeTo(w);
    this.pairs.writeTo(w);
    return w;
  }

  /** The index saved in `file` under `key`; null when there is none, or it is of other data or another layout. */
  static load(file: string, key: string): CompanySearchIndex | null {
    const r = SnapshotReader.open(file, key);
    if (!r) return null;
    try {
      return CompanySearchIndex.readFrom(r, file);
    } finally {
      r.close();
    }
  }

  /**
   * As load, for a server: the file is read on Node's thread pool (SnapshotReader.readAhead), and
   * with `shared` the index's arrays are in shared memory, so that worker threads can search the
   * same index without a copy (fromShared).
   */
  static async loadShared(
    file: string,
    key: string,
    shared = true,
  ): Promise<{ index: CompanySearchIndex; shared: SharedSnapshot | null } | null> {
    const r = SnapshotReader.open(file, key, { shared });
    if (!r) return null;
    try {
      await r.readAhead();
      const index = CompanySearchIndex.readFrom(r, file);
      return index && { index, shared: r.shared };
    } finally {
      r.close();
    }
  }

  /** The index another thread loaded with loadShared, over the same memory. */
  static fromShared(shared: SharedSnapshot): CompanySearchIndex | null {
    return CompanySearchIndex.readFrom(SnapshotReader.fromShared(shared), 'shared memory');
  }

  private static readFrom(r: SnapshotReader, file: string): CompanySearchIndex | null {
    const head = r.json<{ version: number; maxDegree: number; countries: [string, number][] }>();
    if (head.version !== SNAPSHOT_VERSION) return null;
    const vids = PackedStrings.readFrom(r);
    const names = PackedStrings.readFrom(r);
    if (!vids || !names) return null;
    const trigrams = TrigramIndex.readFrom(r);
    const degree = r.i32();
    const byDefault = r.u8();
    const countryOf = r.u16();
    const byCity = KeyedLists.readFrom(r);
    const byIdentifier = KeyedLists.readFrom(r);
    const byHost = KeyedLists.readFrom(r);
    const byIndustry = KeyedLists.readFrom(r);
    if (!byCity || !byIdentifier || !byHost || !byIndustry) return null;
    const byDegree = r.u32();
    const parent = r.u8();
    const rank = r.u32();
    const words = WordIndex.readFrom(r);
    if (!words) return null;
    const cores = PackedRecords.readFrom(r);
    const placeOf = r.u32();
    const places = r.json<string[]>();
    const bounds = BoundLists.readFrom(r);
    const pairs = PairLists.readFrom(r);
    if (!r.done) throw new Error(`search index snapshot ${file}: sections left unread`);
    return new CompanySearchIndex(
      vids,
      trigrams,
      degree,
      byDefault,
      countryOf,
      new Map(head.countries),
      byCity,
      byIdentifier,
      byHost,
      byIndustry,
      byDegree,
      words,
      names,
      parent,
      head.maxDegree,
      rank,
      cores,
      placeOf,
      places,
      bounds,
      pairs,
    );
  }

  /**
   * Reads every company and its search keys from the store. `onRows` hears of each batch read;
   * `signal` stops the build (it rejects) at the next batch or step, within some 50 ms.
   */
  static async build(
    store: Pick<GraphStore, 'scanSearchRows'>,
    log?: Logger,
    opts: { signal?: AbortSignal; onRows?: (count: number) => void } = {},
  ): Promise<CompanySearchIndex> {
    const { signal, onRows } = opts;
    const builder = new SearchIndexBuilder();
    await store.scanSearchRows((rows) => {
      signal?.throwIfAborted();
      builder.add(rows);
      onRows?.(rows.length);
    });
    return CompanySearchIndex.finish(builder, log, signal);
  }

  /** The index of the companies `b` gathered (see SearchIndexBuilder). */
  static async finish(
    b: SearchIndexBuilder,
    log?: Logger,
    signal?: AbortSignal,
  ): Promise<CompanySearchIndex> {
    const { vids, cores } = b.parts();
    const degree = b.degrees();
    log?.info({ companies: vids.length }, 'search index: every company read; indexing them');
    // The parts that need no counts, unless made before they came (SearchIndexBuilder.prepare).
    const made = b.uncountedParts;
    const packedVids = made.vids();
    // Ties in degree go by vid, compared as read back from the packed bytes: a vid cut from text that
    // holds any character beyond Latin-1 is a two-byte string, and a million of those sort about three
    // times slower than the one-byte strings their bytes give back (vids are ASCII by the import's rule).
    const vidOf = Array.from(vids, (_, doc) => packedVids.get(doc)!);
    const order = Uint32Array.from(vids.keys());
    order.sort(
      (a, b) => degree[b]! - degree[a]! || (vidOf[a]! < vidOf[b]! ? -1 : vidOf[a]! > vidOf[b]! ? 1 : 0),
    );
    const rank = new Uint32Array(order.length);
    order.forEach((doc, k) => (rank[doc] = k));
    let maxDegree = 0;
    for (const d of degree) maxDegree = Math.max(maxDegree, d);
    // Each step below takes up to a second at 1M companies, and a rebuild runs beside serving:
    // requests get a turn between them (the word index gives way within its own build).
    const turn = async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    };
    await turn();
    // The word index's typo words are found on a thread of their own meanwhile (see WordIndex.start),
    // unless begun before the counts came (SearchIndexBuilder.prepare).
    const wordsStarted = await b.startWords(signal);
    await turn();
    const trigrams = made.trigrams();
    await turn();
    const { cityLists, identifierLists, hostLists, industryLists } = made.lists();
    await turn();
    const packedNames = made.names();
    await turn();
    const packedCores = cores();
    await turn();
    const words = await wordsStarted.finish(rank);
    await turn();
    const parents = Uint8Array.from(b.parents);
    const trigramsOf = (doc: number) => trigrams.trigramCount(doc);
    const importance = (doc: number) => importanceOf(degree[doc]!, maxDegree, parents[doc] === 1);
    const bounds = await BoundLists.build(words, trigramsOf, importance, turn);
    await turn();
    const pairs = await PairLists.build(words, trigramsOf, importance, turn);
    const index = new CompanySearchIndex(
      packedVids,
      trigrams,
      degree,
      Uint8Array.from(b.defaults),
      Uint16Array.from(b.countryIds),
      b.countries,
      cityLists,
      identifierLists,
      hostLists,
      industryLists,
      order,
      words,
      packedNames,
      parents,
      maxDegree,
      rank,
      packedCores,
      Uint32Array.from(b.placeIds),
      [...b.places.keys()],
      bounds,
      pairs,
    );
    log?.info(
      { companies: vids.length, ms: Date.now() - b.started, coreBytes: index.cores.bytes },
      'search index built',
    );
    return index;
  }

  /** Runs a search; `hasMore` tells whether a further page exists. */
  search(c: SearchCriteria): { hits: SearchHit[]; hasMore: boolean } {
    const allowed = this.filter(c);
    if (allowed === 'none') return { hits: [], hasMore: false };
    const { accept, docs } = allowed;
    const name = c.name?.trim();
    if (name) {
      if ((c.sort ?? 'relevance') === 'relevance') return this.relevancePage(name, docs, accept, c);
      if (docs && docs.length < 5000) return this.rankFew(name, docs, accept, c);
      const r = this.names.search(name, {
        threshold: c.minSimilarity,
        limit: c.limit,
        offset: c.offset,
        weights: this.importance,
        accept,
      });
      return {
        hits: r.matches.map((m) => ({
          vid: this.vids.get(m.doc)!,
          similarity: m.similarity,
          wordSimilarity: wordSimilarity(name, this.names_.get(m.doc)!),
          matchedName: this.names_.get(m.doc)!,
          relevance: null,
          core: this.coreOf(m.doc),
        })),
        hasMore: r.hasMore,
      };
    }
    const hits: SearchHit[] = [];
    let skipped = 0;
    const source = docs ? sortByRank(docs, this.rank) : this.byDegree;
    for (const doc of source) {
      if (!accept(doc)) continue;
      if (skipped < c.offset) {
        skipped++;
        continue;
      }
      if (hits.length === c.limit) return { hits, hasMore: true };
      hits.push({
        vid: this.vids.get(doc)!,
        similarity: null,
        wordSimilarity: null,
        matchedName: null,
        relevance: null,
        core: this.coreOf(doc),
      });
    }
    return { hits, hasMore: false };
  }

  /**
   * The relevance order of {@link search} with every company that meets the other criteria scored, not
   * only the candidates a search draws, and every match scored fully, without the bounds that let a
   * search stop early: the answer a search approximates where many companies match.
   * For tests and `bench/search-exactness.mjs`; it reads the whole index (about two seconds at 1M).
   */
  searchExhaustive(c: SearchCriteria): { hits: SearchHit[]; hasMore: boolean } {
    const name = c.name?.trim();
    if (!name) throw new RangeError('searchExhaustive needs a name');
    const allowed = this.filter(c);
    if (allowed === 'none') return { hits: [], hasMore: false };
    const { accept, docs } = allowed;
    const candidates = new Map<number, number | null>();
    for (const doc of docs ?? this.byDegree) if (accept(doc)) candidates.set(doc, null);
    return this.rankedPage(planQuery(name, this.words), candidates, c, false);
  }

  /**
   * Suggestions for a search box: the most relevant companies whose names (or aliases, or acronyms) hold
   * the typed words, the last one as a beginning. Candidates come from word postings, most important
   * first, and, once two words are typed, from the names that begin with them (the last one as a
   * beginning), fewest further words first, those with the legal forms typed before the others:
   * "Borealis Cab" finds "Borealis Cables Ltd" even where hundreds of more important companies hold
   * both words. Both are read within small budgets, so the answer takes about the same time whatever
   * the size of the index.
   */
  suggest(query: string, limit: number, includeSubsidiaries: boolean): Suggestion[] {
    const text = query.trim();
    const plan = planQuery(text, this.words, true);
    if (plan.significant.length === 0) return [];
    const byDefault = this.byDefault;
    const accept = (doc: number) => includeSubsidiaries || byDefault[doc] === 1;
    const candidates = new Map<number, number | null>();
    if (plan.significant.length >= 2)
      this.leadCandidates(plan, accept, SUGGEST_LEAD_BUDGET, candidates, true);
    // Names holding two or more of the words, the last as a beginning, before those holding one: the
    // companies a suggestion is for may be none of the most important holders of either word.
    for (const doc of this.wordCandidates(plan, accept, SUGGEST_BUDGET, MULTI_WORD_BUDGET, undefined, true))
      if (!candidates.has(doc)) candidates.set(doc, null);
    return this.best(plan, candidates, 0, limit)
      .slice(0, limit)
      .map((s) => ({
        ...this.bareHitOf(s),
        name: this.names_.get(s.doc)!,
        country: this.countryName(s.doc),
      }));
  }

  /**
   * The page of a relevance search (see RELEVANCE_WINDOW): the first window's ranking, then, for each
   * window after it, the ranking drawn for that window without the companies listed before it, up to
   * the window's end. So every page, whatever its offset and limit, is cut from one list.
   */
  private relevancePage(
    name: string,
    docs: readonly number[] | null,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): { hits: SearchHit[]; hasMore: boolean } {
    const last = drawnTo(c);
    if (last === RELEVANCE_WINDOW) return this.pageOf(this.rankRelevant(name, docs, accept, c), c);
    // Matches, not hits, until the page is cut: a hit's fields are made for the page's companies only.
    const listed: Scored[] = [];
    const shown = new Set<number>();
    let more = false;
    for (let window = RELEVANCE_WINDOW; window <= last; window *= 2) {
      const ranked = this.rankRelevant(name, docs, accept, { ...c, offset: 0, limit: window });
      more = ranked.length > window;
      for (const s of ranked.slice(0, window)) {
        if (shown.has(s.doc)) continue;
        if (listed.length === window) {
          more = true;
          break;
        }
        shown.add(s.doc);
        listed.push(s);
      }
      // Nothing past this window's ranking: the windows after it rank no more.
      if (listed.length < window && !more) break;
    }
    const end = c.offset + c.limit;
    return {
      hits: listed.slice(c.offset, end).map((s) => this.hitOf(s)),
      hasMore: listed.length > end || (listed.length === end && more),
    };
  }

  /**
   * Relevance order over trigram, lead and word candidates (see relevance.ts): the matches up to the
   * page's end, and one more where there are.
   */
  private rankRelevant(
    name: string,
    docs: readonly number[] | null,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): Scored[] {
    const plan = planQuery(name, this.words);
    // The query's trigrams, looked up once for every stage below.
    const prepared = this.names.prepare(name);
    if (!docs) {
      const ranked =
        this.searchOneWord(plan, prepared, accept, c) ?? this.searchTwoWords(plan, prepared, accept, c);
      if (ranked) return ranked;
    }
    const candidates = new Map<number, number | null>();
    if (docs && docs.length < 5000) {
      for (const doc of docs) if (accept(doc)) candidates.set(doc, null);
    } else {
      const page = drawnTo(c);
      if (plan.significant.length > 0) {
        this.leadCandidates(plan, accept, Math.max(LEAD_BUDGET, page), candidates);
        for (const doc of this.wordCandidates(plan, accept, page + SEARCH_BUDGET, MULTI_WORD_BUDGET, {
          tq: prepared.q.length,
        })) {
          if (!candidates.has(doc)) candidates.set(doc, null);
        }
        // The names drawn by similarity, the costliest stage, are drawn only where the page the words
        // give is weak enough for them to matter (see SIMILAR_BELOW).
        const ranked = this.best(plan, candidates, c.minSimilarity, page + 1, true, prepared);
        if (ranked.length > page && ranked[page]!.relevance >= SIMILAR_BELOW) return ranked;
        // best() gives the order of scoring every one of its candidates, so the page of them all and
        // the similar names is the page of the best of them and the similar names: the others are not
        // ranked again.
        candidates.clear();
        for (const s of ranked) candidates.set(s.doc, null);
      }
      for (const m of this.similarNames(name, c, accept)) candidates.set(m.doc, m.similarity);
    }
    return this.best(plan, candidates, c.minSimilarity, c.offset + c.limit + 1, true, prepared);
  }

  /**
   * A relevance search for a query of one significant word (legal forms aside: "bosch", "Vogel GmbH",
   * "bore"). It reads the postings of each word the query's word meets (itself, the words it begins, its
   * typo words) in {@link BoundLists} order, best bound first across all of them, and stops once no
   * company left unread can enter the page: among the companies whose names meet the word, the page
   * that scoring every company gives. Those whose names do not can match only by similarity; they are
   * drawn from the trigram index as {@link rankRelevant} draws them (the most similar, so a less
   * similar but more important one may be missed), and only when the page is low enough for them.
   * Null where it does not apply (several significant words, legal forms only, too many readings, or
   * more than BOUNDED_READS postings to read, as a filter that refuses most companies may need): the
   * caller then draws candidates within budgets.
   */
  private searchOneWord(
    plan: QueryPlan,
    prepared: PreparedQuery,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): Scored[] | null {
    if (plan.significant.length !== 1 || plan.onlyLegal) return null;
    const readings = this.readingsOf(plan, 0, true);
    if (!readings) return null;
    // The reader's bound of a posting is the most relevance its company can reach: the word match, the
    // posting's key, the band's similarity, and the parts no list orders (boundConstant).
    const constant = boundConstant(plan);
    if (!this.reader.start(readings, 0.4, constant, prepared.q.length, BOUNDED_CURSORS)) return null;
    return this.boundedRanking(plan, prepared, accept, c, [this.reader], constant, BOUNDED_READS);
  }

  /**
   * A relevance search for a query of two significant words ("Borealis Cables", "Vogel Logistik AG",
   * "Fuchs Plasjics"), read as {@link searchOneWord} reads one: the names holding a reading of each
   * word from {@link PairLists} (every reading of the first with every reading of the second), the
   * names meeting one of them from the words' own lists, whose bound then holds half the word match,
   * best bound first across all of them, until no company left unread can enter the page. A name's
   * best reading of each word is a pair it is listed under, with the first-word part when that reading
   * is its first word, so every bound holds. Null where it does not apply (as for one word, and where
   * a word of the name could stand for both query words, or the pairs to look up are too many).
   */
  private searchTwoWords(
    plan: QueryPlan,
    prepared: PreparedQuery,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): Scored[] | null {
    if (plan.significant.length !== 2 || plan.onlyLegal) return null;
    const first = this.readingsOf(plan, 0, true);
    const second = this.readingsOf(plan, 1, true);
    if (!first || !second || first.size * second.size > BOUNDED_PAIR_LOOKUPS) return null;
    for (const id of first.keys()) if (second.has(id)) return null;
    const pairs = new Map<number, number>();
    for (const [a, s] of first)
      for (const [b, t] of second) {
        const k = this.pairs.indexOf(a, b);
        if (k >= 0) pairs.set(k, (s + t) / 2);
      }
    const one = new Map(first);
    for (const [id, score] of second) one.set(id, score);
    const constant = boundConstant(plan);
    const tq = prepared.q.length;
    if (!this.pairReader.start(pairs, 0.4, constant, tq, BOUNDED_CURSORS)) return null;
    // Coverage is the mean over both words: one met gives at most half its word match.
    if (!this.reader.start(one, 0.2, constant, tq, BOUNDED_CURSORS)) return null;
    return this.boundedRanking(
      plan,
      prepared,
      accept,
      c,
      [this.pairReader, this.reader],
      constant,
      BOUNDED_PAIR_READS,
    );
  }

  /**
   * The ranked matches of a search up to the page's end (and one more), its candidates from `readers` (started), best bound first across
   * them, after the names of exactly the query's words (the same-words part, which no list orders by),
   * and from the similar names where the page is low enough for them. `constant` is what the readers'
   * bounds add for the parts no list orders. Null past `maxReads` postings.
   */
  private boundedRanking(
    plan: QueryPlan,
    prepared: PreparedQuery,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
    readers: BoundReader[],
    constant: number,
    maxReads: number,
  ): Scored[] | null {
    const words = this.words;
    const tq = prepared.q.length;
    // Exact among the names it reads, so a page of the window needs no more of them than its own end.
    const count = c.offset + c.limit + 1;
    const threshold = c.minSimilarity;

    const stamp = this.stamp();
    const seen = this.seenAt;
    const top: Scored[] = [];
    const floor = () => (top.length >= count ? top[count - 1]!.relevance : -Infinity);
    const offer = (doc: number, knownSim: number | null) => {
      if (seen[doc] === stamp) return;
      seen[doc] = stamp;
      if (!accept(doc)) return;
      const [first, end] = words.entriesOf(doc);
      const simBound = similarityBound(tq, this.names.trigramCount(doc));
      const p = this.pendingOf(plan, doc, first, end, knownSim, threshold, simBound);
      if (!p || p.bound < floor()) return;
      if (!this.tighten(p, prepared, threshold) || p.bound < floor()) return;
      top.push(this.scored(p, prepared));
      if (top.length >= count) {
        this.order(top);
        top.length = count;
      }
    };

    // The names of exactly the query's words first: the names beginning with the words list those with
    // nothing after them first.
    const n = plan.significant.length;
    if (plan.exactIds.every((id) => id >= 0)) {
      const list = words.namesBeginning(plan.exactIds);
      const ids = this.beginningIds;
      for (let k = 0; k < list.length; k++) {
        if (k >= maxReads) return null;
        const entry = list[k]!;
        if (!words.beginsWith(entry, plan.exactIds)) continue;
        if (words.significantOf(entry, ids) > n) break;
        offer(words.entryDoc[entry]!, null);
      }
    }

    const { entryDoc } = words;
    let reads = 0;
    for (;;) {
      let next: BoundReader | null = null;
      let head = -Infinity;
      for (const r of readers) {
        const h = r.peek();
        if (h > head) {
          head = h;
          next = r;
        }
      }
      if (!next || (top.length >= count && head < floor())) break;
      if (++reads > maxReads) return null;
      offer(entryDoc[next.next()]!, null);
    }

    // A name meeting no reading has no word match, precision, first word or same words: at most legal
    // forms, both similarities and the highest importance of any company.
    const unmet = constant + 0.1 + 0.3 * this.highestImportance;
    if (!(top.length >= count && unmet < floor())) {
      for (const m of this.similarNames(plan.text, c, accept)) offer(m.doc, m.similarity);
    }
    return this.order(top);
  }

  private readonly beginningIds: number[] = [];

  /**
   * A relevance search's names drawn by similarity: the most similar down to the floor, where the
   * trigram index reads few postings; down to the threshold only when those do not fill the page (a
   * query with typos that words do not catch).
   */
  private similarNames(
    text: string,
    c: SearchCriteria,
    accept: (doc: number) => boolean,
  ): { doc: number; similarity: number }[] {
    const page = drawnTo(c);
    const similar = (threshold: number, limit: number) =>
      this.names.search(text, { threshold, limit, offset: 0, weights: this.importance, accept }).matches;
    const matches = similar(Math.max(c.minSimilarity, TRIGRAM_FLOOR), page + TRIGRAM_EXTRA);
    if (matches.length <= page && c.minSimilarity < TRIGRAM_FLOOR) return similar(c.minSimilarity, page + 1);
    return matches;
  }

  /**
   * The vocabulary words query word `i` meets, with the word-match score each gives as matchEntry does:
   * the word itself 1, with `prefixes` a word it begins by the share of its length, else a typo word
   * 0.7. Null when it begins more than BOUNDED_PREFIX_WORDS words.
   */
  private readingsOf(plan: QueryPlan, i: number, prefixes: boolean): Map<number, number> | null {
    const readings = new Map<number, number>();
    const exact = plan.exactIds[i]!;
    if (prefixes) {
      const from = plan.prefixFrom[i]!;
      const to = plan.prefixTo[i]!;
      if (to - from > BOUNDED_PREFIX_WORDS) return null;
      const length = plan.significant[i]!.length;
      for (let id = from; id < to; id++) readings.set(id, 0.5 + (0.5 * length) / this.words.wordLength(id));
    }
    if (exact >= 0) readings.set(exact, 1);
    for (const id of plan.typos[i]!) if (!readings.has(id)) readings.set(id, 0.7);
    return readings;
  }

  /**
   * A candidate of a search with the bound of its relevance before its trigram overlap is read: its
   * best-matching name of entries [first, end), and similarity taken as `simBound` where not known.
   * Null when no name matches enough (see best).
   */
  private pendingOf(
    plan: QueryPlan,
    doc: number,
    first: number,
    end: number,
    knownSim: number | null,
    threshold: number,
    simBound: number,
  ): Pending | null {
    let entry = -1;
    let match = -1;
    let coverage = 0;
    for (let e = first; e < end; e++) {
      const m = matchEntry(plan, this.words, e);
      if (m.match > match) {
        entry = e;
        match = m.match;
        coverage = m.coverage;
      }
    }
    if (entry < 0) return null;
    if (coverage < 0.5 && (threshold <= 0 || (knownSim !== null && knownSim < threshold))) return null;
    const importance = importanceOf(this.degree[doc]!, this.maxDegree, this.parent[doc] === 1);
    return {
      doc,
      sim: knownSim,
      entry,
      match,
      coverage,
      importance,
      bound: relevanceOf(match, 1, knownSim ?? simBound, importance),
      tight: false,
    };
  }

  /** Per doc, the number of the search that last read it (see stamp). */
  private seenAt = new Uint32Array(0);
  private stampNow = 0;

  private stamp(): number {
    if (this.seenAt.length !== this.degree.length || this.stampNow === 0xffffffff) {
      this.seenAt = new Uint32Array(this.degree.length);
      this.stampNow = 0;
    }
    return ++this.stampNow;
  }

  /** The page the criteria ask for of the candidates in relevance order. */
  private rankedPage(
    plan: QueryPlan,
    candidates: Map<number, number | null>,
    c: SearchCriteria,
    prune = true,
    prepared?: PreparedQuery,
  ): { hits: SearchHit[]; hasMore: boolean } {
    return this.pageOf(
      this.best(plan, candidates, c.minSimilarity, c.offset + c.limit + 1, prune, prepared),
      c,
    );
  }

  /** The page the criteria ask for of matches in relevance order, one more than the page if there are. */
  private pageOf(ordered: Scored[], c: SearchCriteria): { hits: SearchHit[]; hasMore: boolean } {
    return {
      hits: ordered.slice(c.offset, c.offset + c.limit).map((s) => this.hitOf(s)),
      hasMore: ordered.length > c.offset + c.limit,
    };
  }

  /**
   * The `count` most relevant matches among the candidates, in order. A candidate matches when its
   * name's similarity reaches the threshold or its names cover at least half of the query's words.
   *
   * Relevance is bounded from above in two steps, the first cheaper than the second: the word match alone
   * (taking both trigram scores as 1, or the similarity the trigram stage found), then with the
   * candidate's trigram overlap, which reads its row of the trigram index. Candidates are taken best
   * bound first; a loose bound is tightened and the candidate goes back, a tight one is scored
   * fully. Once the best bound left is below the count-th best relevance found, nothing left can enter:
   * the answer is the same as scoring every candidate, and only the candidates that might enter have
   * their overlap read (about a third of them). `prune` false scores every candidate instead (for
   * {@link searchExhaustive}, which tests hold the pruned order against).
   */
  private best(
    plan: QueryPlan,
    candidates: Map<number, number | null>,
    threshold: number,
    count: number,
    prune = true,
    prepared: PreparedQuery = this.names.prepare(plan.text),
  ): Scored[] {
    const pending: Pending[] = [];
    // Each candidate's entries, gathered once (in the map's order) while reading ahead.
    const entries = this.prefetchNames(candidates.keys(), candidates.size);
    let k = 0;
    for (const [doc, knownSim] of candidates) {
      const p = this.pendingOf(plan, doc, entries.first[k]!, entries.end[k++]!, knownSim, threshold, 1);
      if (p) pending.push(p);
    }
    if (!prune) {
      const all: Scored[] = [];
      for (const c of pending) if (this.tighten(c, prepared, threshold)) all.push(this.scored(c, prepared));
      return this.order(all).slice(0, count);
    }
    // Loose bounds best first, tightened ones in a heap: the candidate taken next is the better head of
    // the two. Which of two equal bounds comes first does not change the answer (it stops only below
    // the count-th relevance). Sorted, the next candidates to tighten are known, and their trigram rows
    // are read ahead a block at a time (see readAhead).
    pending.sort((a, b) => b.bound - a.bound);
    const heap = new BoundHeap();
    const top: Scored[] = [];
    let next = 0;
    let readUpTo = 0;
    for (;;) {
      const tight = heap.peek();
      let c: Pending;
      if (next < pending.length && (tight === undefined || pending[next]!.bound > tight.bound)) {
        c = pending[next++]!;
      } else if (tight !== undefined) c = heap.pop()!;
      else break;
      if (top.length >= count && c.bound < top[count - 1]!.relevance) break;
      if (!c.tight) {
        if (next > readUpTo) readUpTo = this.readAhead(pending, next - 1, READ_AHEAD_BLOCK);
        if (this.tighten(c, prepared, threshold)) heap.push(c);
        continue;
      }
      top.push(this.scored(c, prepared));
      if (top.length >= count) {
        this.order(top);
        top.length = Math.min(top.length, count);
      }
    }
    return this.order(top);
  }

  /**
   * Reads ahead what scoring the candidates reads: their importance and the words of their names,
   * aliases and acronyms. At a million companies each of these is a cache miss, and following the chain
   * (company, then its entries, then their words) one candidate at a time waits for every miss in turn;
   * gathering one step for all candidates before the next lets the misses overlap. About a tenth of a
   * search's time in process. Returns each doc's entries [first[k], end[k]), in the order given.
   */
  private prefetchNames(docs: Iterable<number>, count: number): { first: Uint32Array; end: Uint32Array } {
    const { words, degree, parent } = this;
    const { wordStart, entryWords } = words;
    const first = new Uint32Array(count);
    const end = new Uint32Array(count);
    let k = 0;
    let sum = 0;
    for (const doc of docs) {
      [first[k], end[k]] = words.entriesOf(doc);
      sum += degree[doc]! + parent[doc]!;
      k++;
    }
    for (k = 0; k < count; k++) for (let e = first[k]!; e < end[k]!; e++) sum += wordStart[e]!;
    for (k = 0; k < count; k++) for (let e = first[k]!; e < end[k]!; e++) sum += entryWords[wordStart[e]!]!;
    _prefetched = sum;
    return { first, end };
  }

  /**
   * Reads ahead what tightening pending[from, from + block) reads (each candidate's trigram row, and the
   * kind of its best entry), one step for all of them before the next, so that the misses overlap.
   * Returns the end of the block.
   */
  private readAhead(pending: Pending[], from: number, block: number): number {
    const end = Math.min(pending.length, from + block);
    const docs = this.readAheadDocs;
    let sum = 0;
    for (let k = from; k < end; k++) {
      docs[k - from] = pending[k]!.doc;
      sum += this.words.entryKindCode(pending[k]!.entry);
    }
    _prefetched = sum + this.names.readAhead(docs, end - from);
    return end;
  }

  private readonly readAheadDocs = new Uint32Array(READ_AHEAD_BLOCK);

  /**
   * Reads a candidate's trigram overlap and makes its bound tight; false when it does not match (too few
   * words covered and too little similarity).
   */
  private tighten(c: Pending, prepared: PreparedQuery, threshold: number): boolean {
    const overlap = this.names.overlapWith(prepared, c.doc);
    const sim = c.sim ?? overlap.similarity;
    if (c.coverage < 0.5 && !(sim >= threshold && sim > 0)) return false;
    // word_similarity against the name is at most the share of the query's trigrams the name has (the
    // margin covers float4 rounding); against an alias or acronym it is only bounded by 1.
    const wordBound =
      this.words.kindOf(c.entry) === 'name' && prepared.q.length > 0
        ? Math.min(1, overlap.common / prepared.q.length + 1e-6)
        : 1;
    c.sim = sim;
    c.bound = relevanceOf(c.match, wordBound, sim, c.importance);
    c.tight = true;
    return true;
  }

  /** A tightened candidate's relevance. */
  private scored(c: Pending, prepared: PreparedQuery): Scored {
    const name = this.names_.get(c.doc)!;
    const wsName = wordSimilarityOf(prepared.q, name);
    const matched = this.words.entryText.get(c.entry)!;
    const wsMatched = matched === name ? wsName : wordSimilarityOf(prepared.q, matched);
    return {
      doc: c.doc,
      similarity: c.sim!,
      wordSimilarity: wsName,
      entry: c.entry,
      relevance: relevanceOf(c.match, Math.max(wsName, wsMatched), c.sim!, c.importance),
    };
  }

  private order(scored: Scored[]): Scored[] {
    // Ties go by importance order (degree, then vid), which `rank` holds.
    const rank = this.rank;
    return scored.sort(
      (a, b) => b.relevance - a.relevance || b.similarity - a.similarity || rank[a.doc]! - rank[b.doc]!,
    );
  }

  /** A scored candidate as a hit, without its company's fields. */
  private bareHitOf(s: Scored): Omit<SearchHit, 'core'> {
    return {
      vid: this.vids.get(s.doc)!,
      similarity: s.similarity,
      wordSimilarity: s.wordSimilarity,
      matchedName: this.words.entryText.get(s.entry)!,
      relevance: s.relevance,
    };
  }

  private hitOf(s: Scored): SearchHit {
    return { ...this.bareHitOf(s), core: this.coreOf(s.doc) };
  }

  private coreOf(doc: number): CompanyCore {
    return coreOfRecord(this.cores.get<CoreRecord>(doc)!);
  }

  /**
   * Companies with a name, alias or acronym holding a query word, a typo of one, or (for the last query
   * word) a word it begins; per query word at most `budget`, most important companies first, or with
   * `boundOrder` (a query of `tq` trigrams) in the order of the relevance each name can reach through
   * the word (see BoundReader), where the last word begins at most BOUNDED_PREFIX_WORDS words. With
   * `multiWord`, first up to that many whose one name holds two or more of the query's words: a company
   * named by all of them can be less important than hundreds that hold only the rarest one.
   */
  private wordCandidates(
    plan: QueryPlan,
    accept: (doc: number) => boolean,
    budget: number,
    multiWord = 0,
    boundOrder?: { tq: number },
    typing = false,
  ): Set<number> {
    const out = new Set<number>();
    const words = this.words;
    const { entryDoc } = words;
    const byDefault = this.byDefault;
    const n = plan.significant.length;
    const last = n - 1;
    if (multiWord > 0) this.multiWordCandidates(plan, accept, multiWord, out, typing);
    // Rarest words first, sharing one budget: a rare word names few companies and those are the likely
    // answers, while a common word ("systems") would only spend the budget on the most important of many.
    // Every word still gets a share, so two common words ("general motors") both bring candidates.
    const order = plan.significant
      .map((_, i) => i)
      .sort((a, b) => this.frequencyOf(plan, a) - this.frequencyOf(plan, b) || a - b);
    const floor = Math.ceil(budget / (2 * n));
    let spent = 0;
    for (const i of order) {
      const allowance = Math.max(floor, budget - spent);
      let taken = 0;
      // Filters may refuse most postings; reading stops after a bounded number of them.
      let reads = 0;
      const maxReads = 20 * allowance;
      const offer = (doc: number) => {
        reads++;
        if (out.has(doc) || !accept(doc)) return false;
        out.add(doc);
        taken++;
        return true;
      };
      const take = (postings: Uint32Array) => {
        // Read ahead the companies the allowance may take, and their default-search flag, which `accept`
        // reads (see prefetchNames).
        const ahead = Math.min(postings.length, allowance - taken);
        let sum = 0;
        for (let k = 0; k < ahead; k++) sum += entryDoc[postings[k]!]!;
        for (let k = 0; k < ahead; k++) sum += byDefault[entryDoc[postings[k]!]!]!;
        _prefetched = sum;
        for (let k = 0; k < postings.length && taken < allowance && reads < maxReads; k++) {
          offer(entryDoc[postings[k]!]!);
        }
      };
      // In bound order where the words to read are not too many; else most important first.
      if (boundOrder) {
        const readings = this.readingsOf(plan, i, i === last);
        const reader = this.reader;
        if (readings && reader.start(readings, 0.4 / n, 0, boundOrder.tq, BOUNDED_CURSORS)) {
          while (taken < allowance && reads < maxReads) {
            const entry = reader.next();
            if (entry < 0) break;
            offer(entryDoc[entry]!);
          }
          spent += taken;
          continue;
        }
      }
      if (plan.exactIds[i]! >= 0) take(words.postingsOf(plan.exactIds[i]!));
      for (const id of plan.typos[i]!) take(words.postingsOf(id));
      if (i === last && taken < allowance && reads < maxReads) {
        const q = plan.significant[i]!;
        const [from, to] = words.prefixRange(q);
        if (to - from <= MERGE_WORDS)
          this.mergeByImportance(from, to, allowance - taken, maxReads - reads, offer);
        else this.scanByImportance(from, to, allowance - taken, offer);
      }
      spent += taken;
    }
    return out;
  }

  /**
   * Adds to `out` up to `budget` companies whose name, alias or acronym begins with the query's
   * significant words, in the order {@link WordIndex.namesBeginning} lists them: names of exactly those
   * words first. Each word is read as typed and as each of its typo words ("Fuchs Plasjics" as "fuchs
   * plastics"): every word as typed first, then the last words' readings changing fastest, at most
   * LEAD_READINGS readings in all. With `typing`, a last word that begins some name word is read as
   * that beginning: as each of the words it begins (TYPED_WORDS_READ at most), or else as names that
   * begin with the other words and whose word after them begins with it; and the names holding the
   * legal forms typed are taken first from each list.
   */
  private leadCandidates(
    plan: QueryPlan,
    accept: (doc: number) => boolean,
    budget: number,
    out: Map<number, number | null>,
    typing = false,
  ): void {
    const words = this.words;
    let n = plan.significant.length;
    // A last word being typed stands for each word it begins when they are few (the word itself first:
    // ids are in alphabetical order), else for a condition on the word after the others.
    let begun: number[] | null = null;
    let next: [number, number] | undefined;
    if (typing && n >= 2 && plan.prefixTo[n - 1]! > plan.prefixFrom[n - 1]!) {
      const from = plan.prefixFrom[n - 1]!;
      const to = plan.prefixTo[n - 1]!;
      if (to - from <= TYPED_WORDS_READ) begun = Array.from({ length: to - from }, (_, k) => from + k);
      else {
        next = [from, to];
        n--;
      }
    }
    const choices: number[][] = [];
    for (let i = 0; i < n; i++) {
      if (begun && i === n - 1) {
        choices.push(begun);
        continue;
      }
      const ids = plan.exactIds[i]! >= 0 ? [plan.exactIds[i]!] : [];
      for (const id of plan.typos[i]!) ids.push(id);
      // A word that no name has, nor a typo of one: no name begins with all the query's words. A search
      // then reads the names that begin with the words before it ("Crown Castings Co., rtd.", whose
      // typo falls on a legal form, as "crown castings"); a suggestion, or a first word, reads none.
      if (ids.length === 0) {
        if (typing || i === 0) return;
        n = i;
        break;
      }
      choices.push(ids);
    }
    // Legal forms typed ("Prime Packaging SE"): in each list the names holding them first, where dozens
    // of companies share the other words.
    const legal = typing ? plan.legalIds.filter((id) => id >= 0) : [];
    const pick = new Array<number>(n).fill(0);
    const reading = new Array<number>(n);
    const maxReads = 20 * budget;
    let taken = 0;
    let reads = 0;
    for (let r = 0; r < LEAD_READINGS; r++) {
      for (let i = 0; i < n; i++) reading[i] = choices[i]![pick[i]!]!;
      const list = words.namesBeginning(reading);
      for (let pass = legal.length > 0 ? 0 : 1; pass < 2; pass++) {
        for (let k = 0; k < list.length && taken < budget && reads < maxReads; k++) {
          reads++;
          const entry = list[k]!;
          const doc = words.entryDoc[entry]!;
          // A company taken already (in the first pass, or from another reading) is not checked again.
          if (out.has(doc)) continue;
          if (pass === 0 && !legal.every((id) => words.entryHolds(entry, id))) continue;
          if (!words.beginsWith(entry, reading, next) || !accept(doc)) continue;
          out.set(doc, null);
          taken++;
        }
      }
      if (taken >= budget || reads >= maxReads) return;
      // The next reading: the last word's choices change fastest.
      let i = n - 1;
      while (i >= 0 && ++pick[i]! === choices[i]!.length) pick[i--] = 0;
      if (i < 0) return;
    }
  }

  /**
   * Adds to `out` up to `budget` companies (most important first) with a name, alias or acronym that
   * holds at least two of the query's words as they are, read from the postings of the rarest of them
   * (at most MULTI_WORD_READS).
   */
  private multiWordCandidates(
    plan: QueryPlan,
    accept: (doc: number) => boolean,
    budget: number,
    out: Set<number>,
    typing = false,
  ): void {
    const words = this.words;
    // Being typed, the last word is a beginning: a name holds it with any word of the range it begins.
    const last = plan.significant.length - 1;
    const begun =
      typing && last >= 1 && plan.prefixTo[last]! > plan.prefixFrom[last]!
        ? { from: plan.prefixFrom[last]!, to: plan.prefixTo[last]! }
        : null;
    const ids = plan.exactIds.filter((id, i) => id >= 0 && !(begun && i === last));
    if (ids.length + (begun ? 1 : 0) < 2 || ids.length === 0) return;
    let rarest = ids[0]!;
    for (const id of ids) if (words.frequency(id) < words.frequency(rarest)) rarest = id;
    const postings = words.postingsOf(rarest);
    const { entryDoc, entryWords, wordStart, entryBits } = words;
    // Every entry read holds the rarest word, as many times over as the query names it; one whose bits
    // show none of the other words holds nothing more.
    let rarestTimes = 0;
    let others = 0;
    for (const id of ids) {
      if (id === rarest) rarestTimes++;
      else others |= 1 << (id & 31);
    }
    let taken = 0;
    for (let k = 0; k < postings.length && k < MULTI_WORD_READS && taken < budget; k++) {
      const entry = postings[k]!;
      if (!begun && rarestTimes < 2 && (entryBits[entry]! & others) === 0) continue;
      // Most entries hold only the rarest word: that is settled from the entry's own words first, and
      // only the few holding two or more are looked up as companies.
      let held = 0;
      for (const id of ids) {
        for (let w = wordStart[entry]!; w < wordStart[entry + 1]!; w++) {
          if (entryWords[w] === id) {
            held++;
            break;
          }
        }
      }
      if (begun) {
        for (let w = wordStart[entry]!; w < wordStart[entry + 1]!; w++) {
          const id = entryWords[w]!;
          if (id >= begun.from && id < begun.to && !ids.includes(id)) {
            held++;
            break;
          }
        }
      }
      if (held < 2) continue;
      const doc = entryDoc[entry]!;
      if (out.has(doc) || !accept(doc)) continue;
      out.add(doc);
      taken++;
    }
  }

  /**
   * Offers the companies whose names have a word beginning with the prefix whose vocabulary ids are
   * [from, to), most important first, until `budget` are taken: for a short beginning they are common,
   * so few companies are read. Words are compared by id (the vocabulary is sorted), so a beginning that
   * few names have costs a pass over SCAN_LIMIT companies' word ids, not the decoding of their words.
   * The first WIDE_KEEP companies of such a pass were found when the index was opened: they are offered
   * first, in the same order, and the pass goes on after them only if the budget is not spent.
   */
  private scanByImportance(from: number, to: number, budget: number, take: (doc: number) => boolean): void {
    const words = this.words;
    const ids = words.entryWords;
    const wordStart = words.wordStart;
    const scanned = Math.min(this.byDegree.length, SCAN_LIMIT);
    let taken = 0;
    let k = 0;
    const kept = this.widePrefixes.get(from, to);
    if (kept) {
      for (let i = 0; i < kept.docs.length && taken < budget; i++) if (take(kept.docs[i]!)) taken++;
      k = kept.resumeAt;
    }
    for (; k < scanned && taken < budget; k++) {
      const doc = this.byDegree[k]!;
      const [first, end] = words.entriesOf(doc);
      let holds = false;
      for (let w = wordStart[first]!; w < wordStart[end]! && !holds; w++)
        holds = ids[w]! >= from && ids[w]! < to;
      if (holds && take(doc)) taken++;
    }
  }

  /** Names holding a query word exactly (0 for a word no name has). */
  private frequencyOf(plan: QueryPlan, i: number): number {
    const id = plan.exactIds[i]!;
    return id >= 0 ? this.words.frequency(id) : 0;
  }

  /**
   * Walks the postings of vocabulary words [from, to) merged most important company first, offering each
   * company to `take` until it has accepted `budget`: a short beginning such as "s" spans thousands of
   * words, of which only the companies that matter most are wanted.
   */
  private mergeByImportance(
    from: number,
    to: number,
    budget: number,
    maxReads: number,
    take: (doc: number) => boolean,
  ): void {
    const words = this.words;
    const rank = this.rank;
    const lists: Uint32Array[] = [];
    for (let id = from; id < to; id++) lists.push(words.postingsOf(id));
    const pos = new Uint32Array(lists.length);
    const rankAt = (k: number) => rank[words.entryDoc[lists[k]![pos[k]!]!]!]!;
    // A binary min-heap of list numbers keyed by the rank of their next company.
    const heap: number[] = [];
    const less = (a: number, b: number) => rankAt(heap[a]!) < rankAt(heap[b]!);
    const down = (i: number) => {
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) return;
        const m = l + 1 < heap.length && less(l + 1, l) ? l + 1 : l;
        if (!less(m, i)) return;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    };
    lists.forEach((list, k) => {
      if (list.length > 0) heap.push(k);
    });
    for (let i = (heap.length >>> 1) - 1; i >= 0; i--) down(i);
    let taken = 0;
    let reads = 0;
    while (heap.length > 0 && taken < budget && reads++ < maxReads) {
      const k = heap[0]!;
      if (take(words.entryDoc[lists[k]![pos[k]!]!]!)) taken++;
      pos[k]!++;
      if (pos[k]! >= lists[k]!.length) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
      }
      down(0);
    }
  }

  /** Names ranked exactly among a small set of candidates from the key filters. */
  private rankFew(
    name: string,
    docs: readonly number[],
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): { hits: SearchHit[]; hasMore: boolean } {
    const scored: { doc: number; similarity: number }[] = [];
    for (const doc of docs) {
      if (!accept(doc)) continue;
      const similarity = this.names.similarityTo(name, doc);
      if (similarity >= c.minSimilarity && similarity > 0) scored.push({ doc, similarity });
    }
    scored.sort((a, b) => b.similarity - a.similarity || this.rank[a.doc]! - this.rank[b.doc]!);
    const page = scored.slice(c.offset, c.offset + c.limit);
    return {
      hits: page.map((m) => ({
        vid: this.vids.get(m.doc)!,
        similarity: m.similarity,
        wordSimilarity: wordSimilarity(name, this.names_.get(m.doc)!),
        matchedName: this.names_.get(m.doc)!,
        relevance: null,
        core: this.coreOf(m.doc),
      })),
      hasMore: scored.length > c.offset + c.limit,
    };
  }

  /**
   * The documents the key filters allow: an explicit (small) list when a
   * city, identifier, industry or website was given, plus a predicate for the cheap ones.
   */
  private filter(c: SearchCriteria): 'none' | { accept: (doc: number) => boolean; docs: number[] | null } {
    let docs: number[] | null = null;
    const narrow = (list: Uint32Array | undefined) => {
      const next = list ?? new Uint32Array(0);
      docs = docs === null ? Array.from(next) : intersect(docs, next);
    };
    if (c.city !== undefined) narrow(this.byCity.get(cityKey(c.city)));
    if (c.identifier !== undefined) narrow(this.byIdentifier.get(fold(c.identifier)));
    if (c.industry !== undefined) narrow(this.byIndustry.get(fold(c.industry)));
    if (c.website !== undefined) {
      const [host] = hostsOf([c.website]);
      narrow(host ? this.byHost.get(host) : undefined);
    }
    let countryId = -1;
    if (c.country !== undefined) {
      countryId = this.countries.get(countryKey(c.country)) ?? 0;
      if (countryId === 0) return 'none';
    }
    if (docs !== null && (docs as number[]).length === 0) return 'none';
    const byDefault = this.byDefault;
    const countryOf = this.countryOf;
    const all = c.includeSubsidiaries;
    const accept = (doc: number) =>
      (all || byDefault[doc] === 1) && (countryId < 0 || countryOf[doc] === countryId);
    return { accept, docs };
  }
}

/** The four counts of each company, in the order its rows were added (see SearchIndexBuilder.setCounts). */
export interface CompanyCounts {
  suppliers: ArrayLike<number>;
  customers: ArrayLike<number>;
  supplierEvidence: ArrayLike<number>;
  customerEvidence: ArrayLike<number>;
}

/**
 * Gathers companies for a CompanySearchIndex, batch by batch (CompanySearchIndex.finish then
 * indexes them). Rows come either whole (`add`: a store's scan), or before their counts are known
 * (`addUncounted`, then `setCounts`): an import knows every other search key of its companies long
 * before it has counted their relationships and evidence, and most of the index's work needs only
 * those keys, so it can be done while the import goes on reading.
 */
export class SearchIndexBuilder {
  readonly started = Date.now();
  readonly trigrams = new TrigramIndexBuilder();
  /** Each company's core record as JSON: whole, or without its closing counts while they are unknown. */
  private readonly records = new PackedRecordsBuilder();
  private readonly vids: string[] = [];
  private degreeOf: number[] | Int32Array = [];
  readonly defaults: number[] = [];
  readonly countryIds: number[] = [];
  private readonly names: string[] = [];
  // The words of every name are found as the rows come (the vocabulary is sorted once all are read).
  readonly nameWords = new WordIndexBuilder();
  readonly parents: number[] = [];
  readonly countries = new Map<string, number>();
  /** The id in `countries` of each country value seen. */
  private readonly countryIdOf = new Map<string, number>();
  readonly placeIds: number[] = [];
  readonly places = new Map<string, number>();
  readonly byHost = new KeyedListsBuilder();
  readonly byCity = new KeyedListsBuilder();
  readonly byIdentifier = new KeyedListsBuilder();
  readonly byIndustry = new KeyedListsBuilder();
  /** Whether rows came without their counts: null before the first row. */
  private uncounted: boolean | null = null;
  /**
   * The parts of the index that need no counts, each made once, at its first call: by prepare while
   * an import derives the counts, or by CompanySearchIndex.finish. No company is added after the first.
   */
  readonly uncountedParts = {
    vids: once(() => this.closed(() => PackedStrings.from(this.vids))),
    names: once(() => this.closed(() => PackedStrings.from(this.names))),
    trigrams: once(() => this.closed(() => this.trigrams.build())),
    lists: once(() =>
      this.closed(() => ({
        cityLists: this.byCity.build(),
        identifierLists: this.byIdentifier.build(),
        hostLists: this.byHost.build(),
        industryLists: this.byIndustry.build(),
      })),
    ),
  };
  /** The word index begun (startWords). */
  private words: ReturnType<typeof WordIndex.start> | null = null;
  /** Whether a part of the index was made: no company may be added then. */
  private made = false;
  /** The records completed by setCounts. */
  private counted: PackedRecordsBuilder | null = null;

  /** Adds companies with their counts. */
  add(rows: readonly SearchRow[]): void {
    this.mode(false);
    for (const r of rows) {
      this.records.add(coreRecord(r.core));
      (this.degreeOf as number[]).push(r.degree);
      this.keys(r);
    }
  }

  /**
   * The names of the next companies, ahead of their rows (addUncounted, which must then give the same
   * names in the same order): an import reads every name long before it has a company's other keys,
   * and indexing the names is a third of the work of adding a row.
   */
  addNames(names: readonly SearchName[]): void {
    this.mode(true);
    for (const n of names) this.addName(n);
  }

  /** Adds companies whose counts (and so degree and the counts of their core) setCounts gives later. */
  addUncounted(rows: readonly SearchRow[]): void {
    this.mode(true);
    for (const r of rows) {
      const text = JSON.stringify(coreRecord(r.core).slice(0, COUNTED_FROM));
      this.records.addText(text.slice(0, -1));
      this.keys(r);
    }
  }

  /**
   * The counts of the companies added by addUncounted, in their order: each core record is completed as
   * if it had come whole, and the degree is suppliers plus customers (toSearchRow's).
   */
  setCounts(c: CompanyCounts): void {
    // An import of no company has added none either way: its counts are as empty (the index may
    // have been begun already, by prepare).
    if (this.uncounted === null && this.vids.length === 0) this.uncounted = true;
    if (this.uncounted !== true) throw new Error('setCounts is for companies added without their counts');
    const n = this.vids.length;
    for (const list of [c.suppliers, c.customers, c.supplierEvidence, c.customerEvidence])
      if (list.length !== n) throw new Error(`counts of ${list.length} companies for ${n} added`);
    const prefixes = this.records.build();
    const records = new PackedRecordsBuilder();
    const degree = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const sup = c.suppliers[i]!;
      const cus = c.customers[i]!;
      // The order of CoreRecord: supplier evidence, customer evidence, customers, suppliers.
      records.addJoined(
        prefixes.bytesOf(i),
        `,${c.supplierEvidence[i]!},${c.customerEvidence[i]!},${cus},${sup}]`,
      );
      degree[i] = sup + cus;
    }
    this.counted = records;
    this.degreeOf = degree;
  }

  /** The companies' degrees, in the order they were added. */
  degrees(): Int32Array {
    if (this.uncounted === true && !this.counted)
      throw new Error('the search index needs the counts of its companies (setCounts)');
    return this.degreeOf instanceof Int32Array ? this.degreeOf : Int32Array.from(this.degreeOf);
  }

  /** What the index keeps of each company, in the order they were added. */
  parts(): { vids: string[]; cores: () => PackedRecords } {
    return {
      vids: this.vids,
      cores: () => (this.counted ?? this.records).build(),
    };
  }

  /**
   * Every company is added, its counts still to come: makes the parts of the index that need none
   * (some 4 s at 1M companies), which an import's build thread would otherwise make after the counts,
   * beside the staging's writing, while it waits idle for them as the staging derives them. The word
   * index is begun first, so that its typo words are found on their thread meanwhile (4 s more),
   * that thread taking `typoPriority` as the word index says.
   */
  prepare(typoPriority?: TypoPriority): void {
    void this.startWords(undefined, typoPriority);
    const p = this.uncountedParts;
    p.vids();
    p.names();
    p.trigrams();
    p.lists();
  }

  /**
   * The word index begun once every company is added (WordIndex.start), once: by prepare, or by
   * CompanySearchIndex.finish. `signal` stops it, the one of the first call only.
   */
  startWords(signal?: AbortSignal, typoPriority?: TypoPriority): ReturnType<typeof WordIndex.start> {
    if (!this.words) {
      this.words = this.closed(() => WordIndex.start(this.nameWords, undefined, signal, typoPriority));
      // Waited for by CompanySearchIndex.finish; a failure until then is not an unhandled one.
      this.words.catch(() => undefined);
    }
    return this.words;
  }

  private closed<T>(make: () => T): T {
    if (this.names.length !== this.vids.length)
      throw new Error(`names of ${this.names.length} companies given for ${this.vids.length} added`);
    this.made = true;
    return make();
  }

  private mode(uncounted: boolean): void {
    if (this.counted) throw new Error('companies added after their counts');
    if (this.made) throw new Error('companies added after the index was begun');
    if (this.uncounted !== null && this.uncounted !== uncounted)
      throw new Error('a search index is built from rows with their counts or without, not both');
    this.uncounted = uncounted;
  }

  private addName(n: SearchName): void {
    this.trigrams.add(n.name);
    this.names.push(n.name);
    this.nameWords.add(n.aliases?.length ? [n.name, ...n.aliases] : [n.name]);
  }

  private keys(r: SearchRow): void {
    const doc = this.vids.length;
    if (doc === this.names.length) this.addName(r);
    else if (this.names[doc] !== r.name)
      throw new Error(`company ${doc} is named "${r.name}", its name given ahead "${this.names[doc]}"`);
    this.vids.push(r.vid);
    this.defaults.push(r.searchedByDefault ? 1 : 0);
    this.parents.push(r.isClusterParent ? 1 : 0);
    let cid = 0;
    if (r.country) {
      // A country is given in a few hundred ways at most: each way's key is found once.
      cid = this.countryIdOf.get(r.country) ?? 0;
      if (cid === 0) {
        const key = countryKey(r.country);
        cid = this.countries.get(key) ?? this.countries.size + 1;
        this.countries.set(key, cid);
        this.countryIdOf.set(r.country, cid);
      }
    }
    this.countryIds.push(cid);
    let place = 0;
    if (r.country !== null) {
      place = this.places.get(r.country) ?? this.places.size + 1;
      this.places.set(r.country, place);
    }
    this.placeIds.push(place);
    for (const h of r.hosts) this.byHost.add(h, doc);
    for (const city of r.cities) this.byCity.add(cityKey(city), doc);
    if (r.industry) this.byIndustry.add(fold(r.industry), doc);
    if (r.industryCode) {
      this.byIndustry.add(fold(r.industryCode), doc);
      if (r.industryCodeSystem) this.byIndustry.add(fold(`${r.industryCodeSystem}:${r.industryCode}`), doc);
    }
    for (const value of r.identifierValues) this.byIdentifier.add(fold(value), doc);
  }
}

/** `make`'s value, made at the first call and kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}

/** The place of the first count in a CoreRecord: the counts close it. */
const COUNTED_FROM = 7;

function intersect(a: readonly number[], b: Iterable<number>): number[] {
  const set = new Set(b);
  return a.filter((x) => set.has(x));
}

/** The sum of the values read ahead, kept so that reading them is not optimised away. */
let _prefetched = 0;

/** Docs in importance order (degree, then vid): the order of `rank`. */
function sortByRank(docs: readonly number[], rank: Uint32Array): number[] {
  return [...docs].sort((a, b) => rank[a]! - rank[b]!);
}

/** The vid table of {@link CompanySearchIndex}: at most half full, so probes stay short. */
function vidTable(vids: PackedStrings): Int32Array {
  let size = 16;
  while (size < vids.length * 2) size *= 2;
  const table = new Int32Array(size);
  const mask = size - 1;
  for (let doc = 0; doc < vids.length; doc++) {
    let slot = vids.hash(doc) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = doc + 1;
  }
  return table;
}

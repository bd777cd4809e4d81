import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { countryCode } from '../domain/countries';
import { hostsOf } from '../domain/hosts';
import { similarity, wordSimilarity } from '../domain/trigram';
import { importanceOf, matchEntry, planQuery, relevanceOf } from './relevance';
import type { QueryPlan } from './relevance';
import { TrigramIndexBuilder } from './trigram-index';
import type { TrigramIndex } from './trigram-index';
import { WordIndex } from './word-index';

/** What a search can ask for; every criterion given must match. */
export interface SearchCriteria {
  name?: string;
  /** pg_trgm's default threshold is 0.3. */
  minSimilarity: number;
  includeSubsidiaries: boolean;
  city?: string;
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
}

const fold = (s: string) => s.trim().toLowerCase();

/** Country key of the index: the ISO alpha-2 code when the value names a country, else the folded text. */
const countryKey = (value: string) => countryCode(value) ?? fold(value);

/** Candidates per query word taken from word postings in a search, most important companies first. */
const SEARCH_BUDGET = 1500;
/** The same for suggestions, which must answer in a few milliseconds. */
const SUGGEST_BUDGET = 200;
/** Extra trigram matches read beyond the page, for relevance to reorder. */
const TRIGRAM_EXTRA = 100;
/** A prefix spanning more vocabulary words than this is matched by scanning companies by importance. */
const PREFIX_WORDS = 64;
/** Companies scanned, most important first, for a short prefix. */
const PREFIX_SCAN = 200_000;

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
    private readonly vids: string[],
    private readonly names: TrigramIndex,
    private readonly degree: Int32Array,
    private readonly byDefault: Uint8Array,
    private readonly countryOf: Uint16Array,
    private readonly countries: Map<string, number>,
    private readonly byCity: Map<string, number[]>,
    private readonly byIdentifier: Map<string, number[]>,
    private readonly byHost: Map<string, number[]>,
    /** Docs ordered by degree desc, vid asc: the order of searches without a name. */
    private readonly byDegree: Uint32Array,
    private readonly words: WordIndex,
    private readonly names_: string[],
    private readonly parent: Uint8Array,
    private readonly maxDegree: number,
  ) {}

  get size(): number {
    return this.vids.length;
  }

  /** Reads every company and its search keys from the store. */
  static async build(store: GraphStore, log?: Logger): Promise<CompanySearchIndex> {
    const started = Date.now();
    const builder = new TrigramIndexBuilder();
    const vids: string[] = [];
    const degrees: number[] = [];
    const defaults: number[] = [];
    const countryIds: number[] = [];
    const names: string[] = [];
    const entries: string[][] = [];
    const parents: number[] = [];
    const countries = new Map<string, number>();
    const byHost = new Map<string, number[]>();
    const byCity = new Map<string, number[]>();
    const byIdentifier = new Map<string, number[]>();
    const push = (m: Map<string, number[]>, key: string, doc: number) => {
      const list = m.get(key);
      if (!list) m.set(key, [doc]);
      else if (list[list.length - 1] !== doc) list.push(doc);
    };
    await store.scanSearchRows((rows) => {
      for (const r of rows) {
        const doc = builder.add(r.name);
        vids.push(r.vid);
        degrees.push(r.degree);
        defaults.push(r.searchedByDefault ? 1 : 0);
        names.push(r.name);
        entries.push([r.name, ...(r.aliases ?? [])]);
        parents.push(r.isClusterParent ? 1 : 0);
        let cid = 0;
        if (r.country) {
          const key = countryKey(r.country);
          cid = countries.get(key) ?? countries.size + 1;
          countries.set(key, cid);
        }
        countryIds.push(cid);
        for (const h of r.hosts) push(byHost, h, doc);
        for (const city of r.cities) push(byCity, fold(city), doc);
        for (const value of r.identifierValues) push(byIdentifier, fold(value), doc);
      }
    });
    for (const list of byCity.values()) list.sort((a, b) => a - b);
    for (const list of byIdentifier.values()) list.sort((a, b) => a - b);
    const degree = Int32Array.from(degrees);
    const order = Uint32Array.from(vids.keys());
    order.sort((a, b) => degree[b]! - degree[a]! || (vids[a]! < vids[b]! ? -1 : vids[a]! > vids[b]! ? 1 : 0));
    const rank = new Uint32Array(order.length);
    order.forEach((doc, k) => (rank[doc] = k));
    let maxDegree = 0;
    for (const d of degree) maxDegree = Math.max(maxDegree, d);
    const index = new CompanySearchIndex(
      vids,
      builder.build(),
      degree,
      Uint8Array.from(defaults),
      Uint16Array.from(countryIds),
      countries,
      byCity,
      byIdentifier,
      byHost,
      order,
      WordIndex.build(entries, rank),
      names,
      Uint8Array.from(parents),
      maxDegree,
    );
    log?.info({ companies: vids.length, ms: Date.now() - started }, 'search index built');
    return index;
  }

  /** Runs a search; `hasMore` tells whether a further page exists. */
  search(c: SearchCriteria): { hits: SearchHit[]; hasMore: boolean } {
    const allowed = this.filter(c);
    if (allowed === 'none') return { hits: [], hasMore: false };
    const { accept, docs } = allowed;
    const name = c.name?.trim();
    if (name) {
      if ((c.sort ?? 'relevance') === 'relevance') return this.searchRelevant(name, docs, accept, c);
      if (docs && docs.length < 5000) return this.rankFew(name, docs, accept, c);
      const r = this.names.search(name, {
        threshold: c.minSimilarity,
        limit: c.limit,
        offset: c.offset,
        weights: this.degree,
        accept,
      });
      return {
        hits: r.matches.map((m) => ({
          vid: this.vids[m.doc]!,
          similarity: m.similarity,
          wordSimilarity: wordSimilarity(name, this.names_[m.doc]!),
          matchedName: this.names_[m.doc]!,
          relevance: null,
        })),
        hasMore: r.hasMore,
      };
    }
    const hits: SearchHit[] = [];
    let skipped = 0;
    const source = docs ? sortByDegree(docs, this.degree, this.vids) : this.byDegree;
    for (const doc of source) {
      if (!accept(doc)) continue;
      if (skipped < c.offset) {
        skipped++;
        continue;
      }
      if (hits.length === c.limit) return { hits, hasMore: true };
      hits.push({
        vid: this.vids[doc]!,
        similarity: null,
        wordSimilarity: null,
        matchedName: null,
        relevance: null,
      });
    }
    return { hits, hasMore: false };
  }

  /**
   * Suggestions for a search box: the most relevant companies whose names (or aliases, or acronyms) hold
   * the typed words, the last one as a beginning. Only word postings are read, with a small budget, so
   * the answer takes about the same time whatever the size of the index.
   */
  suggest(query: string, limit: number, includeSubsidiaries: boolean): (SearchHit & { name: string })[] {
    const text = query.trim();
    const plan = planQuery(text, this.words);
    if (plan.significant.length === 0) return [];
    const byDefault = this.byDefault;
    const accept = (doc: number) => includeSubsidiaries || byDefault[doc] === 1;
    const scored: Scored[] = [];
    for (const doc of this.wordCandidates(plan, accept, SUGGEST_BUDGET)) {
      const s = this.score(plan, doc, null, 0);
      if (s) scored.push(s);
    }
    return this.order(scored)
      .slice(0, limit)
      .map((s) => ({ ...this.hitOf(s), name: this.names_[s.doc]! }));
  }

  /** Relevance order over trigram candidates and word candidates (see relevance.ts). */
  private searchRelevant(
    name: string,
    docs: readonly number[] | null,
    accept: (doc: number) => boolean,
    c: SearchCriteria,
  ): { hits: SearchHit[]; hasMore: boolean } {
    const plan = planQuery(name, this.words);
    const candidates = new Map<number, number | null>();
    if (docs && docs.length < 5000) {
      for (const doc of docs) if (accept(doc)) candidates.set(doc, null);
    } else {
      const r = this.names.search(name, {
        threshold: c.minSimilarity,
        limit: c.offset + c.limit + TRIGRAM_EXTRA,
        offset: 0,
        weights: this.degree,
        accept,
      });
      for (const m of r.matches) candidates.set(m.doc, m.similarity);
      if (plan.significant.length > 0) {
        for (const doc of this.wordCandidates(plan, accept, Math.max(SEARCH_BUDGET, c.offset + c.limit))) {
          if (!candidates.has(doc)) candidates.set(doc, null);
        }
      }
    }
    const scored: Scored[] = [];
    for (const [doc, sim] of candidates) {
      const s = this.score(plan, doc, sim, c.minSimilarity);
      if (s) scored.push(s);
    }
    const ordered = this.order(scored);
    return {
      hits: ordered.slice(c.offset, c.offset + c.limit).map((s) => this.hitOf(s)),
      hasMore: ordered.length > c.offset + c.limit,
    };
  }

  /**
   * Scores one candidate; null when it is no match: neither its name's similarity reaches the threshold
   * nor do its names cover at least half of the query's words.
   */
  private score(plan: QueryPlan, doc: number, knownSim: number | null, threshold: number): Scored | null {
    const name = this.names_[doc]!;
    const sim = knownSim ?? similarity(plan.text, name);
    const [first, end] = this.words.entriesOf(doc);
    let best = -1;
    let bestMatch = -1;
    let coverage = 0;
    for (let e = first; e < end; e++) {
      const m = matchEntry(plan, this.words, e);
      if (m.match > bestMatch) {
        best = e;
        bestMatch = m.match;
        coverage = m.coverage;
      }
    }
    const passes = (threshold > 0 && sim >= threshold && sim > 0) || coverage >= 0.5;
    if (!passes || best < 0) return null;
    const wsName = wordSimilarity(plan.text, name);
    const matched = this.words.entryText[best]!;
    const wsMatched = matched === name ? wsName : wordSimilarity(plan.text, matched);
    const importance = importanceOf(this.degree[doc]!, this.maxDegree, this.parent[doc] === 1);
    return {
      doc,
      similarity: sim,
      wordSimilarity: wsName,
      entry: best,
      relevance: relevanceOf(bestMatch, Math.max(wsName, wsMatched), sim, importance),
    };
  }

  private order(scored: Scored[]): Scored[] {
    const vids = this.vids;
    const degree = this.degree;
    return scored.sort(
      (a, b) =>
        b.relevance - a.relevance ||
        b.similarity - a.similarity ||
        degree[b.doc]! - degree[a.doc]! ||
        (vids[a.doc]! < vids[b.doc]! ? -1 : vids[a.doc]! > vids[b.doc]! ? 1 : 0),
    );
  }

  private hitOf(s: Scored): SearchHit {
    return {
      vid: this.vids[s.doc]!,
      similarity: s.similarity,
      wordSimilarity: s.wordSimilarity,
      matchedName: this.words.entryText[s.entry]!,
      relevance: s.relevance,
    };
  }

  /**
   * Companies with a name, alias or acronym holding a query word, a typo of one, or (for the last query
   * word) a word it begins; per query word at most `budget`, most important companies first.
   */
  private wordCandidates(plan: QueryPlan, accept: (doc: number) => boolean, budget: number): Set<number> {
    const out = new Set<number>();
    const words = this.words;
    const last = plan.significant.length - 1;
    plan.significant.forEach((q, i) => {
      let taken = 0;
      const take = (postings: Uint32Array) => {
        for (let k = 0; k < postings.length && taken < budget; k++) {
          const doc = words.entryDoc[postings[k]!]!;
          if (out.has(doc) || !accept(doc)) continue;
          out.add(doc);
          taken++;
        }
      };
      if (plan.exactIds[i]! >= 0) take(words.postingsOf(plan.exactIds[i]!));
      for (const id of plan.typos[i]!) take(words.postingsOf(id));
      if (i !== last || taken >= budget) return;
      const [from, to] = words.prefixRange(q);
      if (to - from <= PREFIX_WORDS) {
        for (let id = from; id < to; id++) take(words.postingsOf(id));
        return;
      }
      // A short beginning such as "s" spans thousands of words: scan companies most important first.
      const scanned = Math.min(this.byDegree.length, PREFIX_SCAN);
      for (let k = 0; k < scanned && taken < budget; k++) {
        const doc = this.byDegree[k]!;
        if (out.has(doc) || !accept(doc)) continue;
        const [first, end] = words.entriesOf(doc);
        for (let e = first; e < end; e++) {
          if (words.wordsOfEntry(e).some((w) => w.startsWith(q))) {
            out.add(doc);
            taken++;
            break;
          }
        }
      }
    });
    return out;
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
    scored.sort(
      (a, b) => b.similarity - a.similarity || this.degree[b.doc]! - this.degree[a.doc]! || a.doc - b.doc,
    );
    const page = scored.slice(c.offset, c.offset + c.limit);
    return {
      hits: page.map((m) => ({
        vid: this.vids[m.doc]!,
        similarity: m.similarity,
        wordSimilarity: wordSimilarity(name, this.names_[m.doc]!),
        matchedName: this.names_[m.doc]!,
        relevance: null,
      })),
      hasMore: scored.length > c.offset + c.limit,
    };
  }

  /**
   * The documents the key filters allow: an explicit (small) list when a
   * city, identifier or website was given, plus a predicate for the cheap ones.
   */
  private filter(c: SearchCriteria): 'none' | { accept: (doc: number) => boolean; docs: number[] | null } {
    let docs: number[] | null = null;
    const narrow = (list: number[] | undefined) => {
      const next = list ?? [];
      docs = docs === null ? [...next] : intersect(docs, next);
    };
    if (c.city !== undefined) narrow(this.byCity.get(fold(c.city)));
    if (c.identifier !== undefined) narrow(this.byIdentifier.get(fold(c.identifier)));
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

function intersect(a: readonly number[], b: readonly number[]): number[] {
  const set = new Set(b);
  return a.filter((x) => set.has(x));
}

function sortByDegree(docs: readonly number[], degree: Int32Array, vids: readonly string[]): number[] {
  return [...docs].sort(
    (a, b) => degree[b]! - degree[a]! || (vids[a]! < vids[b]! ? -1 : vids[a]! > vids[b]! ? 1 : 0),
  );
}

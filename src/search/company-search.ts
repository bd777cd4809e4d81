import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { hostsOf } from '../domain/hosts';
import { TrigramIndexBuilder } from './trigram-index';
import type { TrigramIndex } from './trigram-index';

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
}

export interface SearchHit {
  vid: string;
  /** float4 similarity to the name; null when no name was given. */
  similarity: number | null;
}

const fold = (s: string) => s.trim().toLowerCase();

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
        let cid = 0;
        if (r.country) {
          const key = fold(r.country);
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
      if (docs && docs.length < 5000) return this.rankFew(name, docs, accept, c);
      const r = this.names.search(name, {
        threshold: c.minSimilarity,
        limit: c.limit,
        offset: c.offset,
        weights: this.degree,
        accept,
      });
      return {
        hits: r.matches.map((m) => ({ vid: this.vids[m.doc]!, similarity: m.similarity })),
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
      hits.push({ vid: this.vids[doc]!, similarity: null });
    }
    return { hits, hasMore: false };
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
      hits: page.map((m) => ({ vid: this.vids[m.doc]!, similarity: m.similarity })),
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
      countryId = this.countries.get(fold(c.country)) ?? 0;
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

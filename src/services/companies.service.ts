import { z } from 'zod';
import { notFound } from '../domain/errors';
import type { CompanyCore, CompanyProfile } from '../domain/model';
import { check, pageWithDefaults, shortText } from '../domain/params';
import type { Limits } from '../domain/params';
import { formatFloat4 } from '../domain/trigram';
import type { SearchIndexHolder } from '../search/search-index-holder';
import type { GraphStore } from '../store/graph-store';
import type { ReadCache } from './read-cache';

export interface CompanySearchInput {
  name?: string | null;
  limit?: number | null;
  offset?: number | null;
  include_subsidiaries?: boolean | null;
  min_similarity?: number | null;
  city?: string | null;
  industry?: string | null;
  country?: string | null;
  website?: string | null;
  identifier?: string | null;
  sort?: string | null;
}

export type CompanySearchResult = CompanyCore & {
  search_similarity: number | null;
  word_similarity: number | null;
  matched_name: string | null;
};

export interface CompanySuggestInput {
  q: string;
  limit?: number | null;
  include_subsidiaries?: boolean | null;
}

/** A suggestion for a search box: answered from the in-process index alone. */
export interface CompanySuggestion {
  vid: string;
  name: string;
  matched_name: string;
  /** The domiciled country, as relationship lists give a counterpart's; null when unknown. */
  country: string | null;
}

/** Most suggestions one call returns. */
export const MAX_SUGGESTIONS = 20;
/** Suggestions when the call does not say how many. */
export const SUGGEST_DEFAULT_LIMIT = 5;

/** Company search and profiles. */
export class CompaniesService {
  private readonly searchSchema;
  private readonly suggestSchema = z.object({
    q: shortText,
    limit: z
      .number()
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(MAX_SUGGESTIONS, `must be at most ${MAX_SUGGESTIONS}`)
      .default(SUGGEST_DEFAULT_LIMIT),
    include_subsidiaries: z.boolean().default(false),
  });

  constructor(
    private readonly store: GraphStore,
    private readonly index: SearchIndexHolder,
    limits: Limits,
    private readonly cache: ReadCache,
  ) {
    const page = pageWithDefaults(limits);
    this.searchSchema = z.object({
      name: shortText.optional(),
      limit: page.limit,
      offset: page.offset,
      include_subsidiaries: z.boolean().default(false),
      min_similarity: z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1').default(0.3),
      city: shortText.optional(),
      industry: shortText.optional(),
      country: shortText.optional(),
      website: shortText.optional(),
      identifier: shortText.optional(),
      sort: z
        .enum(['relevance', 'similarity'], { message: 'must be relevance or similarity' })
        .default('relevance'),
    });
  }

  /**
   * With `name`: by relevance (see search/relevance.ts), or with sort=similarity by trigram similarity
   * then number of relationships; without it, by number of relationships alone.
   */
  async search(input: CompanySearchInput): Promise<{ results: CompanySearchResult[]; hasMore: boolean }> {
    const p = check(this.searchSchema, dropNulls(input));
    // The index generation is part of the key: results from an index still being rebuilt are not kept.
    return this.cache.get(`search:${this.index.generation}:${JSON.stringify(p)}`, () => this.runSearch(p));
  }

  private async runSearch(
    p: z.infer<typeof this.searchSchema>,
  ): Promise<{ results: CompanySearchResult[]; hasMore: boolean }> {
    const { hits, hasMore } = await this.index.search({
      name: p.name,
      minSimilarity: p.min_similarity,
      includeSubsidiaries: p.include_subsidiaries,
      city: p.city,
      industry: p.industry,
      country: p.country,
      website: p.website,
      identifier: p.identifier,
      limit: p.limit,
      offset: p.offset,
      sort: p.sort,
    });
    // Served from the index alone: it holds each company's result fields, from the same generation.
    // Each hit's core is its own copy (parsed or received for this search), so it becomes the result
    // rather than being copied into one: a page is ten objects of some fifteen fields, on every search.
    const results = hits.map((h) => {
      const result = h.core as CompanySearchResult;
      result.search_similarity = h.similarity === null ? null : formatFloat4(h.similarity);
      result.word_similarity = h.wordSimilarity === null ? null : formatFloat4(h.wordSimilarity);
      result.matched_name = h.matchedName;
      return result;
    });
    return { results, hasMore };
  }

  /** Top matches for a search box, by word beginnings and relevance; never waits on the store. */
  async suggest(input: CompanySuggestInput): Promise<CompanySuggestion[]> {
    const p = check(this.suggestSchema, dropNulls(input));
    const hits = await this.index.suggest({
      query: p.q,
      limit: p.limit,
      includeSubsidiaries: p.include_subsidiaries,
    });
    return hits.map((h) => ({
      vid: h.vid,
      name: h.name,
      matched_name: h.matchedName ?? h.name,
      country: h.country,
    }));
  }

  async profile(vid: string): Promise<CompanyProfile> {
    const company = await this.cache.get(`profile:${vid}`, () => this.store.getCompany(vid));
    if (!company) throw notFound('company', vid);
    return company;
  }

  /** The vid of the parent of the company's cluster (its own vid outside any cluster). */
  async clusterParent(vid: string): Promise<string> {
    const parent = await this.cache.get(`cluster-parent:${vid}`, () => this.store.getClusterParent(vid));
    if (parent === null) throw notFound('company', vid);
    return parent;
  }

  /** One page of the members of cluster `cidId` with its parent; NOT_FOUND for an unknown cluster. */
  async cluster(cidId: string, input: { limit?: number | null; offset?: number | null }) {
    const p = check(
      z.object({ limit: this.searchSchema.shape.limit, offset: this.searchSchema.shape.offset }),
      dropNulls(input),
    );
    const read = (page: { limit: number; offset: number }) =>
      this.cache.get(`cluster-members:${cidId}:${page.limit}:${page.offset}`, () =>
        this.store.listClusterMembers(cidId, page),
      );
    // The parent sorts first, so it is the first member of the first page.
    const [first, members] = await Promise.all([read({ limit: 1, offset: 0 }), read(p)]);
    const parent = first.items[0];
    if (!parent) throw notFound('cluster', cidId);
    return { cid_id: cidId, parent, members };
  }
}

/** GraphQL passes explicit nulls for omitted nullable arguments; treat them as absent. */
export function dropNulls<T extends object>(input: T): { [K in keyof T]?: Exclude<T[K], null> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== null && v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], null> };
}

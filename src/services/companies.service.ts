import { z } from 'zod';
import { notFound } from '../domain/errors';
import type { CompanyCore, CompanyProfile } from '../domain/model';
import { check, pageSchema } from '../domain/params';
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
  country?: string | null;
  website?: string | null;
  identifier?: string | null;
}

export type CompanySearchResult = CompanyCore & { search_similarity: number | null };

const text = (field: string) =>
  z
    .string()
    .trim()
    .min(1, `${field} must not be empty`)
    // Code points, as JSON Schema's maxLength counts them (zod's max counts UTF-16 units).
    .refine((v) => [...v].length <= 200, `${field} must be at most 200 characters`)
    .optional();

/** Company search and profiles. */
export class CompaniesService {
  private readonly searchSchema;

  constructor(
    private readonly store: GraphStore,
    private readonly index: SearchIndexHolder,
    limits: Limits,
    private readonly cache: ReadCache,
  ) {
    const page = pageSchema(limits);
    this.searchSchema = z.object({
      name: text('name'),
      limit: page.limit.default(10),
      offset: page.offset.default(0),
      include_subsidiaries: z.boolean().default(false),
      min_similarity: z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1').default(0.3),
      city: text('city'),
      country: text('country'),
      website: text('website'),
      identifier: text('identifier'),
    });
  }

  /**
   * Ranked by trigram similarity to `name` (then by number of relationships),
   * or by number of relationships alone when no name is given.
   */
  async search(input: CompanySearchInput): Promise<{ results: CompanySearchResult[]; hasMore: boolean }> {
    const p = check(this.searchSchema, dropNulls(input));
    // The index generation is part of the key: results from an index still being rebuilt are not kept.
    return this.cache.get(`search:${this.index.generation}:${JSON.stringify(p)}`, () => this.runSearch(p));
  }

  private async runSearch(
    p: z.infer<typeof this.searchSchema>,
  ): Promise<{ results: CompanySearchResult[]; hasMore: boolean }> {
    const { hits, hasMore } = (await this.index.get()).search({
      name: p.name,
      minSimilarity: p.min_similarity,
      includeSubsidiaries: p.include_subsidiaries,
      city: p.city,
      country: p.country,
      website: p.website,
      identifier: p.identifier,
      limit: p.limit,
      offset: p.offset,
    });
    const companies = await this.store.getCompanies(hits.map((h) => h.vid));
    const byVid = new Map(companies.map((c) => [c.vid, c]));
    const results = hits.flatMap((h) => {
      const c = byVid.get(h.vid);
      return c
        ? [{ ...c, search_similarity: h.similarity === null ? null : formatFloat4(h.similarity) }]
        : [];
    });
    return { results, hasMore };
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

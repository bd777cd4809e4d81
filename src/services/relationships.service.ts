import { z } from 'zod';
import { notFound } from '../domain/errors';
import type { Direction, RelationshipItem } from '../domain/model';
import { check, confidence, evidenceAfter, isoDate, pageWithDefaults } from '../domain/params';
import type { Limits } from '../domain/params';
import type { Logger } from '../logger';
import type { GraphStore, Page } from '../store/graph-store';
import { ListHeads } from './list-heads';
import type { KnownCompanies } from './list-heads';
import { dropNulls } from './companies.service';
import type { ReadCache } from './read-cache';

export interface RelationshipListInput {
  confidence_score?: number | null;
  date?: string | null;
  limit?: number | null;
  offset?: number | null;
}

/** Supplier and customer lists, per company or grouped by cluster. */
export class RelationshipsService {
  private readonly schema;
  /** The first entries of the longest lists, kept so their usual pages need no store read. */
  readonly heads: ListHeads;

  constructor(
    private readonly store: GraphStore,
    limits: Limits,
    private readonly cache: ReadCache,
    /** Null while no such copy is current (before the search index is built, or while it catches up). */
    private readonly known: () => KnownCompanies | null = () => null,
    log?: Logger,
  ) {
    this.heads = new ListHeads(store, known, log);
    const page = pageWithDefaults(limits);
    this.schema = z.object({
      confidence_score: confidence.default(0),
      date: isoDate.optional(),
      limit: page.limit,
      offset: page.offset,
    });
  }

  async list(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    input: RelationshipListInput,
  ): Promise<Page<RelationshipItem>> {
    const p = check(this.schema, dropNulls(input));
    const key = `list:${direction}:${grouping}:${vid}:${p.confidence_score}:${p.date ?? ''}:${p.limit}:${p.offset}`;
    return this.cache.get(key, () => this.read(vid, direction, grouping, p));
  }

  private async read(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    p: z.infer<typeof this.schema>,
  ): Promise<Page<RelationshipItem>> {
    const query = {
      minConfidence: p.confidence_score,
      evidenceFrom: evidenceAfter(p.date),
      limit: p.limit,
      offset: p.offset,
    };
    const known = this.known();
    const counterparts = known ? (v: string) => known.summary(v) : undefined;
    if (grouping === 'cluster') {
      const parent = await this.store.getClusterParent(vid);
      if (parent === null) throw notFound('company', vid);
      return (
        this.heads.page(parent, direction, query, known, 'cluster') ??
        this.store.listRelationships(parent, direction, 'cluster', query, counterparts)
      );
    }
    const kept = this.heads.page(vid, direction, query, known);
    if (kept) return kept;
    const page = await this.store.listRelationships(vid, direction, 'company', query, counterparts);
    // An empty page is either "no relationships" or "no such company": only then ask which.
    if (page.items.length === 0 && !(known?.has(vid) ?? (await this.store.companyExists(vid)))) {
      throw notFound('company', vid);
    }
    return page;
  }
}

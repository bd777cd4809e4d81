import { z } from 'zod';
import { AppError, badRequest, notFound } from '../domain/errors';
import { check, shortText } from '../domain/params';
import type { GraphStore } from '../store/graph-store';
import type { FoundChain } from './path-search';
import { searchChains } from './path-search';
import type { ReadCache } from './read-cache';
import { dropNulls } from './companies.service';

export interface PathsInput {
  from: string;
  to: string;
  max_tiers?: number | null;
  direction?: string | null;
  limit?: number | null;
}

/** One hop of a chain: a relationship, supplier towards customer. */
export interface ChainHop {
  relationship_id: string;
  supplier_vid: string;
  customer_vid: string;
  confidence_score: number | null;
  latest_evidence_date: string | null;
}

/** A supplier chain between two companies, read from `from` towards `to`. */
export interface SupplyChain {
  /** Hops in the chain. */
  length: number;
  /** The lowest confidence of its hops (null when no hop has one). */
  weakest_confidence: number | null;
  /** vids from `from` to `to`. */
  companies: { vid: string; name: string }[];
  hops: ChainHop[];
}

/** Most chains one call returns. */
export const MAX_PATHS = 50;

/** Hops and chains when the call does not say; hops never above MAX_TIERS. */
export const PATH_DEFAULTS = { maxTiers: 3, limit: 10 } as const;
export const defaultPathTiers = (maxTiers: number) => Math.min(PATH_DEFAULTS.maxTiers, maxTiers);
/** How two companies are connected: the shortest supplier chains between them. */
export class PathsService {
  private readonly schema;

  constructor(
    private readonly store: GraphStore,
    private readonly cache: ReadCache,
    maxTiers: number,
  ) {
    this.schema = z.object({
      from: shortText,
      to: shortText,
      max_tiers: z
        .number()
        .int('must be an integer')
        .min(1, 'must be at least 1')
        .max(maxTiers, `must be at most ${maxTiers} (MAX_TIERS)`)
        .default(defaultPathTiers(maxTiers)),
      direction: z
        .enum(['supplier', 'customer'], { message: 'must be supplier or customer' })
        .default('supplier'),
      limit: z
        .number()
        .int('must be an integer')
        .min(1, 'must be at least 1')
        .max(MAX_PATHS, `must be at most ${MAX_PATHS}`)
        .default(PATH_DEFAULTS.limit),
    });
  }

  /**
   * direction "supplier": chains by which `to` supplies `from`, through its suppliers' suppliers;
   * "customer": chains by which `from` supplies `to`. Fewest hops first, then strongest weakest hop
   * first (a chain is as sure as its least sure relationship), then by relationship ids. A chain never
   * passes the same company twice.
   */
  async find(input: PathsInput): Promise<SupplyChain[]> {
    const p = check(this.schema, dropNulls(input));
    if (p.from === p.to) throw badRequest([{ field: 'to', reason: 'must differ from from' }]);
    const cores = new Map((await this.store.getCompanies([p.from, p.to])).map((c) => [c.vid, c]));
    const fromCore = cores.get(p.from);
    const toCore = cores.get(p.to);
    if (!fromCore) throw notFound('company', p.from);
    if (!toCore) throw notFound('company', p.to);
    return this.cache.get(`paths:${JSON.stringify(p)}`, async () => {
      // The search runs from the supplier end towards the customer end.
      const upstream = p.direction === 'supplier';
      const [source, target] = upstream ? [toCore, fromCore] : [fromCore, toCore];
      const found = await searchChains((vids, dir) => this.store.pathSteps(vids, dir), {
        source: source.vid,
        target: target.vid,
        maxHops: p.max_tiers,
        limit: p.limit,
        sourceDegree: source.count_customers,
        targetDegree: target.count_suppliers,
      });
      if (!found.complete && found.chains.length === 0) {
        throw new AppError(
          'PATHS_TOO_BROAD',
          `The companies are too connected to search within ${p.max_tiers} tiers (${found.rowsRead} relationships read before the search budget ran out); ask for fewer tiers.`,
        );
      }
      const chains = found.chains.map((s) => toChain(s, upstream));
      const vids = [...new Set(chains.flatMap((c) => c.companies.map((x) => x.vid)))];
      const names = new Map((await this.store.getCompanies(vids)).map((c) => [c.vid, c.name]));
      for (const c of chains) for (const x of c.companies) x.name = names.get(x.vid) ?? x.vid;
      return chains;
    });
  }
}

function toChain(s: FoundChain, upstream: boolean): SupplyChain {
  const hops: ChainHop[] = s.hops.map((h, k) => ({
    relationship_id: h.edge_id,
    supplier_vid: s.vids[k]!,
    customer_vid: s.vids[k + 1]!,
    confidence_score: h.confidence_score,
    latest_evidence_date: h.latest_evidence_date,
  }));
  return {
    length: hops.length,
    weakest_confidence: s.weakest === -1 ? null : s.weakest,
    // Read from `from`: for suppliers that is the customer end, so the found order turns round.
    companies: (upstream ? [...s.vids].reverse() : s.vids).map((vid) => ({ vid, name: vid })),
    hops: upstream ? hops.reverse() : hops,
  };
}

import { z } from 'zod';
import { badRequest, notFound } from '../domain/errors';
import { check } from '../domain/params';
import type { GraphStore, StoredPath } from '../store/graph-store';
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
/**
 * Chains read from the graph per chain returned: the graph gives the shortest first, and ordering by
 * weakest confidence within the last length read needs the rest of that length.
 */
const READ_FACTOR = 20;
const MAX_READ = 2000;

/** How two companies are connected: the shortest supplier chains between them. */
export class PathsService {
  private readonly schema;

  constructor(
    private readonly store: GraphStore,
    private readonly cache: ReadCache,
    maxTiers: number,
  ) {
    const vid = (field: string) =>
      z
        .string()
        .trim()
        .min(1, `${field} must not be empty`)
        .max(200, `${field} must be at most 200 characters`);
    this.schema = z.object({
      from: vid('from'),
      to: vid('to'),
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
    const [fromKnown, toKnown] = await Promise.all([
      this.store.companyExists(p.from),
      this.store.companyExists(p.to),
    ]);
    if (!fromKnown) throw notFound('company', p.from);
    if (!toKnown) throw notFound('company', p.to);
    return this.cache.get(`paths:${JSON.stringify(p)}`, async () => {
      const upstream = p.direction === 'supplier';
      const stored = await this.store.findPaths({
        source: upstream ? p.to : p.from,
        target: upstream ? p.from : p.to,
        maxHops: p.max_tiers,
        limit: Math.min(MAX_READ, p.limit * READ_FACTOR),
      });
      const chains = stored
        .filter((s) => new Set(s.vids).size === s.vids.length)
        .map((s) => toChain(s, upstream))
        .sort(compareChains)
        .slice(0, p.limit);
      const vids = [...new Set(chains.flatMap((c) => c.companies.map((x) => x.vid)))];
      const names = new Map((await this.store.getCompanies(vids)).map((c) => [c.vid, c.name]));
      for (const c of chains) for (const x of c.companies) x.name = names.get(x.vid) ?? x.vid;
      return chains;
    });
  }
}

function toChain(s: StoredPath, upstream: boolean): SupplyChain {
  const hops: ChainHop[] = s.hops.map((h, k) => ({
    relationship_id: h.edge_id,
    supplier_vid: s.vids[k]!,
    customer_vid: s.vids[k + 1]!,
    confidence_score: h.confidence_score,
    latest_evidence_date: h.latest_evidence_date,
  }));
  const confidences = hops.flatMap((h) => (h.confidence_score === null ? [] : [h.confidence_score]));
  return {
    length: hops.length,
    weakest_confidence: confidences.length > 0 ? Math.min(...confidences) : null,
    // Read from `from`: for suppliers that is the customer end, so the stored order turns round.
    companies: (upstream ? [...s.vids].reverse() : s.vids).map((vid) => ({ vid, name: vid })),
    hops: upstream ? hops.reverse() : hops,
  };
}

function compareChains(a: SupplyChain, b: SupplyChain): number {
  if (a.length !== b.length) return a.length - b.length;
  const wa = a.weakest_confidence ?? -1;
  const wb = b.weakest_confidence ?? -1;
  if (wa !== wb) return wb - wa;
  const ka = a.hops.map((h) => h.relationship_id).join('\u0000');
  const kb = b.hops.map((h) => h.relationship_id).join('\u0000');
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

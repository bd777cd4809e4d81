import { z } from 'zod';
import type { CompanySummary, Direction, RelationshipItem } from '../domain/model';
import { check, confidence, isoDate } from '../domain/params';
import type { Page } from '../store/graph-store';
import type { CompaniesService } from './companies.service';
import { dropNulls } from './companies.service';
import type { RelationshipListInput } from './relationships.service';

/** The tier map's bounds: small enough to draw in a browser and to answer synchronously. */
export const TIER_MAP_LIMITS = {
  maxTiers: 3,
  defaultTiers: 2,
  maxPerNode: 50,
  maxNodes: 500,
  defaultPerNode: 10,
  defaultNodes: 150,
} as const;

export interface TierMapInput {
  vid: string;
  direction?: 'supplier' | 'customer' | null;
  tiers?: number | null;
  min_confidence?: number | null;
  date?: string | null;
  per_node?: number | null;
  max_nodes?: number | null;
}

export interface TierMapNode {
  vid: string;
  name: string;
  country: string | null;
  /** Steps from the root (0 for the root itself). */
  tier: number;
  count_suppliers: number;
  count_customers: number;
  /** Whether this company's counterparts were read (false for the last tier and beyond the node budget). */
  expanded: boolean;
  /** Counterparts in the map's direction (before filters) that are not drawn from this company. */
  hidden: number;
}

export interface TierMapEdge {
  relationship_id: string;
  supplier_id: string;
  customer_id: string;
  confidence_score: number;
  latest_relationship_date: string | null;
  edge_ids: string[];
}

export interface TierMap {
  root: string;
  direction: 'supplier' | 'customer';
  tiers: number;
  nodes: TierMapNode[];
  edges: TierMapEdge[];
  /** Whether the node budget stopped the walk before every drawn company was expanded. */
  truncated: boolean;
  /** Sum of `hidden` over the nodes. */
  hidden: number;
}

/** What the tier map reads: the cached relationship lists and profiles. */
export interface TierMapReads {
  companies: Pick<CompaniesService, 'profile'>;
  relationships: {
    list(
      vid: string,
      direction: Direction,
      grouping: 'company' | 'cluster',
      input: RelationshipListInput,
    ): Promise<Page<RelationshipItem>>;
  };
}

const schema = z.object({
  vid: z.string().min(1, 'must not be empty'),
  direction: z.enum(['supplier', 'customer']).default('supplier'),
  tiers: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(TIER_MAP_LIMITS.maxTiers, `must be at most ${TIER_MAP_LIMITS.maxTiers}`)
    .default(TIER_MAP_LIMITS.defaultTiers),
  min_confidence: confidence.default(0),
  date: isoDate.optional(),
  per_node: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(TIER_MAP_LIMITS.maxPerNode, `must be at most ${TIER_MAP_LIMITS.maxPerNode}`)
    .default(TIER_MAP_LIMITS.defaultPerNode),
  max_nodes: z
    .number()
    .int()
    .min(2, 'must be at least 2')
    .max(TIER_MAP_LIMITS.maxNodes, `must be at most ${TIER_MAP_LIMITS.maxNodes}`)
    .default(TIER_MAP_LIMITS.defaultNodes),
});

/** Lists read at once: enough to hide latency, few enough to leave the store's connections to others. */
const PARALLEL_READS = 4;

/**
 * A bounded neighbourhood of one company for drawing: tier by tier, each company
 * contributes its `per_node` most confident counterparts (the store's list order),
 * until `max_nodes` companies are drawn. A hub with thousands of counterparts
 * therefore costs one list page, not a walk of the whole graph; what is left out
 * is counted per company so the map can say so.
 */
export async function tierMap(reads: TierMapReads, input: TierMapInput): Promise<TierMap> {
  const p = check(schema, dropNulls(input));
  const listDirection: Direction = p.direction === 'supplier' ? 'suppliers' : 'customers';
  const total = (c: { count_suppliers: number; count_customers: number }) =>
    p.direction === 'supplier' ? c.count_suppliers : c.count_customers;

  const root = await reads.companies.profile(p.vid);
  const nodes = new Map<string, TierMapNode>();
  nodes.set(root.vid, {
    vid: root.vid,
    name: root.name,
    country: root.domiciled_country,
    tier: 0,
    count_suppliers: root.count_suppliers,
    count_customers: root.count_customers,
    expanded: false,
    hidden: 0,
  });
  const edges = new Map<string, TierMapEdge>();
  const totals = new Map<string, number>([[root.vid, total(root)]]);
  let truncated = false;
  let frontier = [root.vid];

  for (let tier = 1; tier <= p.tiers && frontier.length > 0; tier++) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length; i += PARALLEL_READS) {
      if (nodes.size >= p.max_nodes) {
        truncated = true;
        break;
      }
      const batch = frontier.slice(i, i + PARALLEL_READS);
      const pages = await Promise.all(
        batch.map((vid) =>
          reads.relationships.list(vid, listDirection, 'company', {
            confidence_score: p.min_confidence,
            date: p.date ?? null,
            limit: p.per_node,
            offset: 0,
          }),
        ),
      );
      batch.forEach((vid, k) => {
        const from = nodes.get(vid)!;
        from.expanded = true;
        let drawn = 0;
        for (const item of pages[k]!.items) {
          const c = item.counterpart;
          if (!nodes.has(c.vid)) {
            if (nodes.size >= p.max_nodes) {
              truncated = true;
              continue;
            }
            nodes.set(c.vid, nodeOf(c, tier));
            totals.set(c.vid, total(c));
            next.push(c.vid);
          }
          drawn++;
          const [supplier, customer] = p.direction === 'supplier' ? [c.vid, vid] : [vid, c.vid];
          edges.set(item.relationship.relationship_id, {
            relationship_id: item.relationship.relationship_id,
            supplier_id: supplier,
            customer_id: customer,
            confidence_score: item.relationship.confidence_score,
            latest_relationship_date: item.relationship.latest_relationship_date,
            edge_ids: item.relationship.edge_ids,
          });
        }
        from.hidden = Math.max(0, (totals.get(vid) ?? 0) - drawn);
      });
    }
    frontier = next;
  }

  const list = [...nodes.values()];
  return {
    root: root.vid,
    direction: p.direction,
    tiers: p.tiers,
    nodes: list,
    edges: [...edges.values()],
    truncated,
    hidden: list.reduce((sum, n) => sum + n.hidden, 0),
  };
}

function nodeOf(c: CompanySummary, tier: number): TierMapNode {
  return {
    vid: c.vid,
    name: c.name,
    country: c.country,
    tier,
    count_suppliers: c.count_suppliers,
    count_customers: c.count_customers,
    expanded: false,
    hidden: 0,
  };
}

import type { Direction } from '../../domain/model';
import type { RelationshipListInput } from '../../services/relationships.service';
import type { GraphQLContext } from '../context';

/**
 * One resolver shape for the four lists, used both as root fields
 * (`suppliers(vid: ...)`) and as Company fields (`company { suppliers }`).
 */
export function relationshipList(direction: Direction, grouping: 'company' | 'cluster') {
  const key = direction === 'suppliers' ? 'supplier' : 'customer';
  return async (vid: string, args: RelationshipListInput, ctx: GraphQLContext) => {
    const page = await ctx.services.relationships.list(vid, direction, grouping, args);
    return {
      results: page.items.map((i) => ({
        [key]: i.counterpart,
        relationship: i.relationship,
        evidences: i.evidences,
      })),
      has_more: page.hasMore,
    };
  };
}

type RootArgs = RelationshipListInput & { vid: string };

function root(direction: Direction, grouping: 'company' | 'cluster') {
  const list = relationshipList(direction, grouping);
  return (_: unknown, { vid, ...args }: RootArgs, ctx: GraphQLContext) => list(vid, args, ctx);
}

/** Query.suppliers, Query.customers, Query.cluster_suppliers, Query.cluster_customers. */
export const suppliers = root('suppliers', 'company');
export const customers = root('customers', 'company');
export const cluster_suppliers = root('suppliers', 'cluster');
export const cluster_customers = root('customers', 'cluster');

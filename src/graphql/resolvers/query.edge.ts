import type { GraphQLContext } from '../context';

/** Query.edge: one edge with its evidence. */
export function edge(_: unknown, args: { edge_id: string }, ctx: GraphQLContext) {
  return ctx.services.edges.get(args.edge_id);
}

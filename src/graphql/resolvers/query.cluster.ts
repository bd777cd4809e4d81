import type { GraphQLContext } from '../context';

/** Query.cluster: a cluster's parent and one page of its members. */
export async function cluster(
  _: unknown,
  args: { cid_id: string; limit?: number | null; offset?: number | null },
  ctx: GraphQLContext,
) {
  const { cid_id, parent, members } = await ctx.services.companies.cluster(args.cid_id, args);
  return { cid_id, parent, members: { results: members.items, has_more: members.hasMore } };
}

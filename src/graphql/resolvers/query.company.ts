import type { GraphQLContext } from '../context';

/** Query.company: one profile. */
export function company(_: unknown, args: { vid: string }, ctx: GraphQLContext) {
  return ctx.profile(args.vid);
}

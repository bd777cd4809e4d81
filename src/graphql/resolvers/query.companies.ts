import type { CompanySearchInput } from '../../services/companies.service';
import type { GraphQLContext } from '../context';

/** Query.companies: company search. */
export async function companies(_: unknown, args: CompanySearchInput, ctx: GraphQLContext) {
  const { results, hasMore } = await ctx.services.companies.search(args);
  return { results, has_more: hasMore };
}

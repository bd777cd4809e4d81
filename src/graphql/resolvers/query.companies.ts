import type { CompanySearchInput, CompanySuggestInput } from '../../services/companies.service';
import type { GraphQLContext } from '../context';

/** Query.companies: company search. */
export async function companies(_: unknown, args: CompanySearchInput, ctx: GraphQLContext) {
  const { results, hasMore } = await ctx.services.companies.search(args);
  return { results, has_more: hasMore };
}

/** Query.suggest_companies: search-box suggestions. */
export async function suggest_companies(_: unknown, args: CompanySuggestInput, ctx: GraphQLContext) {
  return ctx.services.companies.suggest(args);
}

import type { CompanyProfile, Direction } from '../../domain/model';
import type { RelationshipListInput } from '../../services/relationships.service';
import type { GraphQLContext } from '../context';
import { relationshipList } from './query.relationships';

type Parent = { vid: string } & Partial<CompanyProfile>;

/**
 * Search results carry the summary fields only; a profile-only field asked of
 * one loads the profile (once per request).
 */
function profileField<K extends keyof CompanyProfile>(key: K) {
  return async (parent: Parent, _: unknown, ctx: GraphQLContext): Promise<CompanyProfile[K]> =>
    key in parent ? (parent[key] as CompanyProfile[K]) : (await ctx.profile(parent.vid))[key];
}

function list(direction: Direction, grouping: 'company' | 'cluster') {
  const run = relationshipList(direction, grouping);
  return (parent: Parent, args: RelationshipListInput, ctx: GraphQLContext) => run(parent.vid, args, ctx);
}

/** Field resolvers of Company. */
export const CompanyFields = {
  search_similarity: (parent: Parent & { search_similarity?: number | null }) =>
    parent.search_similarity ?? null,
  identifiers: profileField('identifiers'),
  addresses: profileField('addresses'),
  domiciled_country: profileField('domiciled_country'),
  incorporated_country: profileField('incorporated_country'),
  incorporation_date: profileField('incorporation_date'),
  ipo_date: profileField('ipo_date'),
  is_active: profileField('is_active'),
  is_freight_forwarder: profileField('is_freight_forwarder'),
  is_public: profileField('is_public'),
  hq_phone_number: profileField('hq_phone_number'),
  is_cluster_parent: profileField('is_cluster_parent'),
  aliases: profileField('aliases'),
  industry: profileField('industry'),
  industry_code_system: profileField('industry_code_system'),
  industry_code: profileField('industry_code'),
  suppliers: list('suppliers', 'company'),
  customers: list('customers', 'company'),
  cluster_suppliers: list('suppliers', 'cluster'),
  cluster_customers: list('customers', 'cluster'),
  cluster_parent: async (parent: Parent, _: unknown, ctx: GraphQLContext) =>
    ctx.profile(await ctx.services.companies.clusterParent(parent.vid)),
  cluster_members: async (
    parent: Parent,
    args: { limit?: number | null; offset?: number | null },
    ctx: GraphQLContext,
  ) => {
    const { cid_id } = await ctx.profile(parent.vid);
    const { members } = await ctx.services.companies.cluster(cid_id, args);
    return { results: members.items, has_more: members.hasMore };
  },
};

/** Field resolvers of CompanySummary and Edge that reach a full company. */
export const CompanySummaryFields = {
  company: (parent: { vid: string }, _: unknown, ctx: GraphQLContext) => ctx.profile(parent.vid),
};

export const EdgeFields = {
  supplier: (parent: { supplier_id: string }, _: unknown, ctx: GraphQLContext) =>
    ctx.profile(parent.supplier_id),
  customer: (parent: { customer_id: string }, _: unknown, ctx: GraphQLContext) =>
    ctx.profile(parent.customer_id),
};

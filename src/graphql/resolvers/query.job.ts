import type { GraphQLFieldResolver } from 'graphql';
import type { JobPage, JobView } from '../../jobs/job-queue';
import type { GraphQLContext } from '../context';

/** Query.job: a run of the caller's key, with download links signed afresh; another key's run is NOT_FOUND. */
export const job: GraphQLFieldResolver<unknown, GraphQLContext, { run_id: string }> = (
  _parent,
  { run_id },
  ctx,
): Promise<JobView> =>
  ctx.services.jobs.view(ctx.services.jobs.parseRunId(run_id), ctx.keyId, ctx.origin?.());

/** Query.tierViewLimits: the bounds a run must keep to on this server. */
export const tierViewLimits: GraphQLFieldResolver<unknown, GraphQLContext> = (
  _parent,
  _args,
  ctx,
): { max_tiers: number } => ({ max_tiers: ctx.services.jobs.maxTiers });

/** Query.jobs: the caller's runs, newest first. */
export const jobs: GraphQLFieldResolver<
  unknown,
  GraphQLContext,
  { limit?: number | null; offset?: number | null }
> = (_parent, { limit, offset }, ctx): Promise<JobPage> =>
  ctx.services.jobs.list(ctx.keyId, { limit, offset }, ctx.origin?.());

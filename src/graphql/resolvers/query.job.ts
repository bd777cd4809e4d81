import type { GraphQLFieldResolver } from 'graphql';
import type { JobView } from '../../jobs/job-queue';
import type { GraphQLContext } from '../context';

/** Query.job: a run's state, with download links signed afresh. */
export const job: GraphQLFieldResolver<unknown, GraphQLContext, { run_id: string }> = (
  _parent,
  { run_id },
  ctx,
): Promise<JobView> => ctx.services.jobs.view(ctx.services.jobs.parseRunId(run_id));

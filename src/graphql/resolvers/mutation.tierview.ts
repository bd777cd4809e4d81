import type { GraphQLFieldResolver } from 'graphql';
import { checkIdempotencyKey } from '../../domain/idempotency-key';
import { parseTierViewRequest } from '../../domain/tierview';
import type { JobView } from '../../jobs/job-queue';
import type { GraphQLContext } from '../context';

interface TierViewInput {
  root_nodes: string;
  num_tiers: number;
  direction: 'supplier' | 'customer';
  min_evid_date?: string | null;
  output_multiple_tables?: boolean | null;
  callback_url?: string | null;
  min_confidence?: number | null;
  countries?: string[] | null;
  max_companies_per_tier?: number | null;
  csv_bom?: boolean | null;
}

/**
 * Mutation.startTierView: the same checks as POST /v1/tierviewjob/, then the run is queued, once per
 * `idempotency_key` of the caller's (see JobQueue.submitOnce).
 */
export const startTierView: GraphQLFieldResolver<
  unknown,
  GraphQLContext,
  { input: TierViewInput; idempotency_key?: string | null }
> = async (_parent, { input, idempotency_key }, ctx): Promise<{ run_id: number; replayed: boolean }> => {
  const request = parseTierViewRequest(input, ctx.services.jobs.maxTiers);
  const key =
    idempotency_key === undefined || idempotency_key === null
      ? null
      : checkIdempotencyKey(idempotency_key, 'idempotency_key');
  const { run, replayed } = await ctx.services.jobs.submitOnce(request, ctx.keyId, key);
  return { run_id: ctx.services.jobs.publicRunId(run.runId), replayed };
};

/** Mutation.cancelJob: only the key that started the run may cancel it (another key gets NOT_FOUND). */
export const cancelJob: GraphQLFieldResolver<unknown, GraphQLContext, { run_id: string }> = (
  _parent,
  { run_id },
  ctx,
): Promise<JobView> =>
  ctx.services.jobs.cancel(ctx.services.jobs.parseRunId(run_id), ctx.keyId, ctx.origin?.());

import { tierMap as buildTierMap } from '../../services/tiermap.service';
import type { TierMapInput } from '../../services/tiermap.service';
import type { GraphQLContext } from '../context';

/** Query.tierMap: a bounded neighbourhood for the app's network view. */
export function tierMap(_: unknown, args: TierMapInput, ctx: GraphQLContext) {
  return buildTierMap(ctx.services, args);
}

import type { PathsInput } from '../../services/paths.service';
import type { GraphQLContext } from '../context';

/** Query.paths: supplier chains between two companies. */
export async function paths(_: unknown, args: PathsInput, ctx: GraphQLContext) {
  return ctx.services.paths.find(args);
}

import { badRequest } from '../domain/errors';
import { OPERATIONS } from './operations';
import { parseQuery } from './query-params';
import type { RestDeps } from './rest-deps';
import { sendJson } from './json-answer';
import { RouteTable } from './route-table';

const PATH_PARAMS = {
  from: 'string',
  to: 'string',
  max_tiers: 'int',
  direction: 'string',
  limit: 'int',
} as const;

/** /v1/paths: how two companies are connected. */
export function pathsRoutes(deps: RestDeps): RouteTable {
  const r = new RouteTable();
  r.get('/paths', async (req, res) => {
    const q = parseQuery(req.query, PATH_PARAMS);
    const missing = (['from', 'to'] as const).filter((k) => q[k] === undefined);
    if (missing.length > 0)
      throw badRequest(missing.map((k) => ({ field: `query.${k}`, reason: 'required' })));
    const data = await deps.run(OPERATIONS.paths, q, req);
    sendJson(res, { results: data.paths });
  });
  return r;
}

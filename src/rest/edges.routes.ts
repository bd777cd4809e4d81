import { OPERATIONS } from './operations';
import { checkPathId, parseQuery } from './query-params';
import type { RestDeps } from './rest-deps';
import { sendJson } from './json-answer';
import { RouteTable } from './route-table';

/** /v1/edges/{edge_id}: one edge with its evidence. */
export function edgesRoutes(deps: RestDeps): RouteTable {
  const r = new RouteTable();
  r.get('/edges/:edge_id', async (req, res) => {
    const edgeId = checkPathId('edge_id', req.params.edge_id);
    parseQuery(req.query, {});
    const data = await deps.run(OPERATIONS.edge, { edge_id: edgeId }, req);
    sendJson(res, data.edge);
  });
  return r;
}

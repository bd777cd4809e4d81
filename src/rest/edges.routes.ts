import { Router } from 'express';
import { OPERATIONS } from './operations';
import { checkPathId, parseQuery } from './query-params';
import type { RestDeps } from './rest-deps';

/** /v1/edges/{edge_id}: one edge with its evidence. */
export function edgesRoutes(deps: RestDeps): Router {
  const r = Router();
  r.get('/edges/:edge_id', async (req, res) => {
    const edgeId = checkPathId('edge_id', req.params.edge_id);
    parseQuery(req.query, {});
    const data = await deps.run(OPERATIONS.edge, { edge_id: edgeId }, req);
    res.json(data.edge);
  });
  return r;
}

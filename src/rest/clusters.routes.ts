import { OPERATIONS } from './operations';
import { checkPathId, parseQuery } from './query-params';
import { askedPage, pageLinks } from './links';
import type { RestDeps } from './rest-deps';
import { sendJson } from './json-answer';
import { RouteTable } from './route-table';

interface ClusterData {
  cid_id: string;
  parent: unknown;
  members: { has_more: boolean; results: unknown[] };
}

/** /v1/clusters/{cid_id}: a cluster's parent and a page of its members. */
export function clustersRoutes(deps: RestDeps): RouteTable {
  const r = new RouteTable();
  r.get('/clusters/:cid_id', async (req, res) => {
    const cidId = checkPathId('cid_id', req.params.cid_id);
    const q = parseQuery(req.query, { limit: 'int', offset: 'int' });
    // Added to the parameters rather than spread into a copy: see pageLinks.
    q.cid_id = cidId;
    const data = await deps.run(OPERATIONS.cluster, q, req);
    const c = data.cluster as ClusterData;
    // The cluster's own fields come first, so its body names the links itself (see pageLinks).
    const links = pageLinks(req, deps, askedPage(q, c.members.has_more));
    sendJson(res, {
      cid_id: c.cid_id,
      parent: c.parent,
      next: links.next,
      previous: links.previous,
      results: c.members.results,
    });
  });
  return r;
}

import type { Request, Response } from 'express';
import { idempotencyKeyHeader } from '../domain/idempotency-key';
import { parseTierViewRequest } from '../domain/tierview';
import { askedPage, pageBody } from './links';
import { OPERATIONS } from './operations';
import { parseQuery } from './query-params';
import type { RestDeps } from './rest-deps';
import { sendJson } from './json-answer';
import { RouteTable } from './route-table';
import { jsonObjectBody } from './request-body';
import { withRestFieldNames } from './field-names';

/** A job as REST shows it (spec 4.6): no `result_state` before the end, `{}` as the output while RUNNING. */
function jobBody(job: Record<string, unknown>): Record<string, unknown> {
  const state = { ...(job.state as Record<string, unknown>) };
  if (state.result_state === null) delete state.result_state;
  let output = job.output as Record<string, unknown> | null;
  if (output && output.result === null) output = {};
  return { run_id: job.run_id, state, output };
}

/** /v1/tierviewjob/, /v1/jobs/ and /v1/jobs/{run_id}: start, list, poll and cancel the caller's tier-view exports. */
export function jobsRoutes(deps: RestDeps, maxTiers: () => number): RouteTable {
  const r = new RouteTable();
  const start = async (req: Request, res: Response) => {
    const body = jsonObjectBody(req);
    parseQuery(req.query, {});
    const request = await withRestFieldNames(req, () => parseTierViewRequest(body, maxTiers()));
    const key = idempotencyKeyHeader(req.headers['idempotency-key'], 'header.Idempotency-Key');
    const data = await deps.run(
      OPERATIONS.startTierView,
      {
        input: {
          root_nodes: request.root_nodes,
          num_tiers: request.num_tiers,
          direction: request.direction,
          min_evid_date: request.min_evid_date,
          output_multiple_tables: request.output_multiple_tables,
          callback_url: request.callback_url,
          min_confidence: request.min_confidence,
          countries: request.countries,
          max_companies_per_tier: request.max_companies_per_tier,
          csv_bom: request.csv_bom,
        },
        idempotency_key: key ?? null,
      },
      req,
    );
    const started = data.startTierView as { run_id: number; replayed: boolean };
    // The answer is the same either way; the header tells a client that retried that the run was there.
    if (started.replayed) res.setHeader('Idempotent-Replayed', 'true');
    sendJson(res, { run_id: started.run_id });
  };
  // The route table matches these with and without a trailing slash.
  r.post('/tierviewjob', start);

  // The caller's runs, newest first, paged like the other lists.
  r.get('/jobs', async (req, res) => {
    const q = parseQuery(req.query, { limit: 'int', offset: 'int' });
    const data = await deps.run(OPERATIONS.jobs, q, req);
    const page = data.jobs as { has_more: boolean; results: Record<string, unknown>[] };
    sendJson(res, pageBody(req, deps, askedPage(q, page.has_more), page.results.map(jobBody)));
  });

  const show = async (req: Request<{ run_id: string }>, res: Response) => {
    parseQuery(req.query, {});
    const data = await deps.run(OPERATIONS.job, { run_id: req.params.run_id }, req);
    sendJson(res, jobBody(data.job as Record<string, unknown>));
  };
  r.get('/jobs/:run_id', show);

  const cancel = async (req: Request<{ run_id: string }>, res: Response) => {
    parseQuery(req.query, {});
    const data = await deps.run(OPERATIONS.cancelJob, { run_id: req.params.run_id }, req);
    sendJson(res, jobBody(data.cancelJob as Record<string, unknown>));
  };
  r.post('/jobs/:run_id/cancel', cancel);
  r.delete('/jobs/:run_id', cancel);
  return r;
}

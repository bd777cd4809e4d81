import type { Request } from 'express';
import type { DocumentNode } from 'graphql';
import { badRequest } from '../domain/errors';
import { OPERATIONS } from './operations';
import { checkPathId, parseQuery } from './query-params';
import { askedPage, pageBody } from './links';
import type { RestDeps } from './rest-deps';
import { sendJson } from './json-answer';
import { RouteTable } from './route-table';

const SEARCH_PARAMS = {
  name: 'string',
  limit: 'int',
  offset: 'int',
  include_subsidiaries: 'boolean',
  min_similarity: 'number',
  city: 'string',
  industry: 'string',
  country: 'string',
  website: 'string',
  identifier: 'string',
  sort: 'string',
} as const;

const SUGGEST_PARAMS = { q: 'string', limit: 'int', include_subsidiaries: 'boolean' } as const;

const LIST_PARAMS = { confidence_score: 'number', date: 'string', limit: 'int', offset: 'int' } as const;

interface PageData<T> {
  has_more: boolean;
  results: T[];
}

/** /v1/companies/... routes: validate, run the operation, add links, send. */
export function companiesRoutes(deps: RestDeps): RouteTable {
  const r = new RouteTable();
  r.get('/companies', async (req, res) => {
    const q = parseQuery(req.query, SEARCH_PARAMS);
    const data = await deps.run(OPERATIONS.searchCompanies, q, req);
    const page = data.companies as PageData<Record<string, unknown>>;
    // search_similarity is returned when a name is given (spec 2.1); so are the scores beside it.
    const results =
      q.name === undefined
        ? page.results.map(({ search_similarity: _s, word_similarity: _w, matched_name: _m, ...c }) => c)
        : page.results;
    sendJson(res, pageBody(req, deps, askedPage(q, page.has_more), results));
  });

  // Before /companies/:vid, which would otherwise take "suggest" for a vid.
  r.get('/companies/suggest', async (req, res) => {
    const q = parseQuery(req.query, SUGGEST_PARAMS);
    if (q.q === undefined) throw badRequest([{ field: 'query.q', reason: 'required' }]);
    const data = await deps.run(OPERATIONS.suggestCompanies, q, req);
    sendJson(res, { results: data.suggestions });
  });

  r.get('/companies/:vid', async (req, res) => {
    const vid = checkPathId('vid', req.params.vid);
    parseQuery(req.query, {});
    const data = await deps.run(OPERATIONS.companyProfile, { vid }, req);
    sendJson(res, data.company);
  });

  const list = (path: string, op: DocumentNode) =>
    r.get(`/companies/:vid/${path}`, async (req: Request<{ vid: string }>, res) => {
      const vid = checkPathId('vid', req.params.vid);
      const q = parseQuery(req.query, LIST_PARAMS);
      // The variables are the parameters with the vid added, not a copy made by spreading them (see pageLinks).
      q.vid = vid;
      const data = await deps.run(op, q, req);
      const page = data.list as PageData<unknown>;
      sendJson(res, pageBody(req, deps, askedPage(q, page.has_more), page.results));
    });
  list('suppliers', OPERATIONS.suppliers);
  list('customers', OPERATIONS.customers);
  list('cluster_suppliers', OPERATIONS.clusterSuppliers);
  list('cluster_customers', OPERATIONS.clusterCustomers);
  return r;
}

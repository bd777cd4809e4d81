import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createHttpServer } from '../../src/http/http-server';
import { dispatchUnder } from '../../src/http/dispatch-under';
import { clustersRoutes } from '../../src/rest/clusters.routes';
import { companiesRoutes } from '../../src/rest/companies.routes';
import type * as JsonAnswer from '../../src/rest/json-answer';
import type { RestDeps } from '../../src/rest/rest-deps';
import { sameShape } from '../support/v8-shapes';

/** Requests per case: enough for V8 to optimize the routes, whose optimized code made the shapes. */
const ROUNDS = 600;

/** The bodies the routes send, recorded as sendJson is handed them. */
const bodies: object[] = [];
jest.mock('../../src/rest/json-answer', () => {
  const actual = jest.requireActual<typeof JsonAnswer>('../../src/rest/json-answer');
  return {
    ...actual,
    sendJson: (res: express.Response, body: object) => {
      bodies.push(body);
      actual.sendJson(res, body);
    },
  };
});

/**
 * Page bodies and list variables are built as objects whose V8 shape every request shares: an
 * object made by a spread and then added to took a shape of its own on every request, so every
 * property lookup on it missed V8's caches (bench/README.md, 2026-12-01, morning).
 */
describe('REST page bodies and operation variables', () => {
  let server: http.Server;
  let base: string;
  const variables: object[] = [];
  beforeAll(async () => {
    const deps: RestDeps = {
      publicUrl: undefined,
      maxOffset: 10_000,
      run: (_document, vars) => {
        variables.push(vars);
        const page = { has_more: true, results: [{ vid: 'c1' }] };
        return Promise.resolve({
          companies: page,
          list: page,
          cluster: { cid_id: 'k1', parent: { vid: 'c1' }, members: page },
        });
      },
    };
    const app = express();
    app.use(dispatchUnder('/v1', companiesRoutes(deps).include(clustersRoutes(deps)), []));
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['a search', '/v1/companies/?name=acme&limit=5'],
    ['a supplier list', '/v1/companies/c1/suppliers/?limit=5'],
    ['a cluster', '/v1/clusters/k1?limit=5'],
  ])('gives %s the same shapes on every request', async (_what, path) => {
    bodies.length = 0;
    variables.length = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { next: string | null; results: unknown[] };
      expect(body.next).toContain('offset=5');
      expect(body.results).toEqual([{ vid: 'c1' }]);
    }
    expect(bodies).toHaveLength(ROUNDS);
    expect(variables).toHaveLength(ROUNDS);
    expect(sameShape(bodies[ROUNDS - 2]!, bodies[ROUNDS - 1]!)).toBe(true);
    expect(sameShape(variables[ROUNDS - 2]!, variables[ROUNDS - 1]!)).toBe(true);
  });
});

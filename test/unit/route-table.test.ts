import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isAppError } from '../../src/domain/errors';
import { createHttpServer } from '../../src/http/http-server';
import { dispatchUnder } from '../../src/http/dispatch-under';
import { RouteTable } from '../../src/rest/route-table';
import type { RouteMatch } from '../../src/rest/route-table';

const noop = () => undefined;

function table(): RouteTable {
  return new RouteTable()
    .get('/companies', noop)
    .get('/companies/suggest', noop)
    .get('/companies/:vid', noop)
    .get('/companies/:vid/suppliers', noop)
    .post('/tierviewjob', noop)
    .get('/jobs/:run_id', noop)
    .delete('/jobs/:run_id', noop)
    .post('/jobs/:run_id/cancel', noop);
}

const params = (m: RouteMatch) => (m.handler ? m.params : { allowed: m.allowed });

describe('RouteTable.find', () => {
  const t = table();

  it('matches literals in any case and allows one trailing slash, as express does by default', () => {
    expect(params(t.find('GET', '/companies/'))).toEqual({});
    expect(params(t.find('GET', '/Companies/ab/SUPPLIERS/'))).toEqual({ vid: 'ab' });
    expect(params(t.find('POST', '/TierViewJob/'))).toEqual({});
    expect(params(t.find('GET', '/companies//'))).toEqual({ allowed: [] });
    expect(params(t.find('GET', '/companies/ab/suppliers/x'))).toEqual({ allowed: [] });
  });

  it('takes the first route that matches, so a literal written before a parameter wins', () => {
    const seen: string[] = [];
    const ordered = new RouteTable()
      .get('/companies/suggest', () => void seen.push('suggest'))
      .get('/companies/:vid', () => void seen.push('vid'));
    const found = ordered.find('GET', '/companies/suggest');
    expect(found.handler).not.toBeNull();
    void found.handler?.({} as never, {} as never);
    expect(seen).toEqual(['suggest']);
  });

  it('decodes parameters and refuses broken percent-encoding as the client’s mistake', () => {
    expect(params(t.find('GET', '/companies/a%20b'))).toEqual({ vid: 'a b' });
    let thrown: unknown;
    try {
      t.find('GET', '/companies/%E0%A4%A');
    } catch (e) {
      thrown = e;
    }
    expect(isAppError(thrown) && thrown.code).toBe('BAD_REQUEST');
    expect(isAppError(thrown) && thrown.fieldErrors[0]?.field).toBe('path.vid');
  });

  it('answers HEAD with GET routes and lists the methods a path has otherwise', () => {
    expect(t.find('HEAD', '/companies/x').handler).not.toBeNull();
    expect(params(t.find('PUT', '/companies/x'))).toEqual({ allowed: ['GET', 'HEAD'] });
    expect(params(t.find('GET', '/jobs/7/cancel'))).toEqual({ allowed: ['POST'] });
    expect(params(t.find('POST', '/jobs/7'))).toEqual({ allowed: ['DELETE', 'GET', 'HEAD'] });
  });

  it('refuses patterns it would not match as written', () => {
    expect(() => new RouteTable().get('companies', noop)).toThrow(/not of the form/);
    expect(() => new RouteTable().get('/companies//x', noop)).toThrow(/not of the form/);
    expect(() => new RouteTable().get('/companies/:', noop)).toThrow(/not of the form/);
  });

  it('lists its routes in order', () => {
    expect(new RouteTable().get('/a/:b', noop).post('/c', noop).list()).toEqual([
      { method: 'GET', path: '/a/:b' },
      { method: 'POST', path: '/c' },
    ]);
  });
});

describe('dispatchUnder', () => {
  let server: http.Server;
  let base: string;
  const calls: string[] = [];
  const mark =
    (name: string): RequestHandler =>
    (_req, _res, next) => {
      calls.push(name);
      next();
    };

  beforeAll(async () => {
    const routes = new RouteTable()
      .get('/things/:id', (req, res) => {
        res.json({ id: req.params.id, url: req.url, baseUrl: req.baseUrl, originalUrl: req.originalUrl });
      })
      .get('/broken', () => {
        throw new Error('thrown');
      })
      .get('/rejects', () => Promise.reject(new Error('rejected')));
    const refuseSecret: RequestHandler = (req, _res, next) => {
      if (req.headers['x-secret'] === 'no') next(new Error('refused before the route'));
      else next();
    };
    const asyncBefore: RequestHandler = (_req, _res, next) => Promise.resolve().then(() => next());
    const app = express();
    app.use(dispatchUnder('/v1', routes, [mark('first'), refuseSecret, asyncBefore, mark('last')]));
    app.get('/v1x', (_req, res) => {
      res.json({ passedBy: true });
    });
    const after: ErrorRequestHandler = (err: unknown, req, res, _next) => {
      res.status(599).json({ error: (err as Error).message, url: req.url, baseUrl: req.baseUrl });
    };
    app.use(after);
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    calls.length = 0;
  });

  it('runs the middlewares in order, then the route, with the prefix as baseUrl', async () => {
    const res = await fetch(`${base}/V1/things/a%2Fb/?x=1`);
    expect(await res.json()).toEqual({
      id: 'a/b',
      url: '/things/a%2Fb/?x=1',
      baseUrl: '/V1',
      originalUrl: '/V1/things/a%2Fb/?x=1',
    });
    expect(calls).toEqual(['first', 'last']);
  });

  it('leaves paths that only begin like the prefix to the rest of the app', async () => {
    expect(await (await fetch(`${base}/v1x`)).json()).toEqual({ passedBy: true });
    expect(calls).toEqual([]);
  });

  it('answers 404 and 405 itself, after the middlewares', async () => {
    const missing = await fetch(`${base}/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('NOT_FOUND');
    const wrong = await fetch(`${base}/v1/things/1`, { method: 'DELETE' });
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(((await wrong.json()) as { detail: string }).detail).toBe(
      'DELETE is not allowed on /v1/things/1; use GET, HEAD.',
    );
    expect(calls).toEqual(['first', 'last', 'first', 'last']);
  });

  it('hands errors of middlewares and routes, thrown or rejected, to the app with the URL as it came', async () => {
    for (const [path, headers, error] of [
      ['/v1/things/1', { 'x-secret': 'no' }, 'refused before the route'],
      ['/v1/broken', {}, 'thrown'],
      ['/v1/rejects', {}, 'rejected'],
    ] as const) {
      const res = await fetch(`${base}${path}`, { headers });
      expect([res.status, await res.json()]).toEqual([599, { error, url: path, baseUrl: '' }]);
    }
  });

  it('hands a parameter that cannot be decoded on as the client’s mistake', async () => {
    const res = await fetch(`${base}/v1/things/%E0%A4%A`);
    expect(res.status).toBe(599);
    expect(((await res.json()) as { error: string }).error).toMatch(/path\.id: not valid percent-encoding/);
  });
});

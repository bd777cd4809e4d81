import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import express from 'express';
import { createHttpServer } from '../../src/http/http-server';
import { fastProperties, sameShape } from '../support/v8-shapes';

describe('createHttpServer', () => {
  let server: http.Server;
  let base: string;
  /** What the first middleware saw of each request before anything was added to it. */
  const seen: { ownId: boolean; ownKeyId: boolean; ownLocals: boolean }[] = [];
  /** The requests and responses that reached the route `/shape`. */
  const shapes: { req: object; res: object }[] = [];
  beforeAll(async () => {
    const app = express();
    app.use((req, res, next) => {
      seen.push({
        ownId: Object.hasOwn(req, 'id'),
        ownKeyId: Object.hasOwn(req, 'keyId'),
        ownLocals: Object.hasOwn(res, 'locals'),
      });
      next();
    });
    app.use(express.json());
    app.get('/things/:id', (req, res) => {
      res.locals.seen = true;
      res.json({
        params: req.params,
        query: req.query,
        baseUrl: req.baseUrl,
        originalUrl: req.originalUrl,
        id: (req as unknown as { id?: unknown }).id ?? null,
        locals: res.locals.seen as unknown,
        path: req.path,
        accepts: req.accepts('json'),
      });
    });
    const router = express.Router();
    router.get('/deep/:n', (req, res) => {
      res.json({ baseUrl: req.baseUrl, params: req.params });
    });
    app.use('/mounted', router);
    app.get('/shape', (req, res) => {
      shapes.push({ req, res });
      res.json({ ok: true });
    });
    app.post('/echo', (req, res) => {
      res.status(201).json({ body: req.body as unknown });
    });
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("gives requests and responses express's properties from their making", async () => {
    seen.length = 0;
    await fetch(`${base}/things/a1`);
    expect(seen).toEqual([{ ownId: true, ownKeyId: true, ownLocals: true }]);
  });

  it('leaves express, its router and its body parser working as before', async () => {
    const res = await fetch(`${base}/things/a1?x=1&y=two`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      params: { id: 'a1' },
      query: { x: '1', y: 'two' },
      baseUrl: '',
      originalUrl: '/things/a1?x=1&y=two',
      id: null,
      locals: true,
      path: '/things/a1',
      accepts: 'json',
    });
    const deep = await fetch(`${base}/mounted/deep/7`);
    expect(await deep.json()).toEqual({ baseUrl: '/mounted', params: { n: '7' } });
    const posted = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: [1, 2] }),
    });
    expect(posted.status).toBe(201);
    expect(await posted.json()).toEqual({ body: { a: [1, 2] } });
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
  });

  it('makes every request and response with one shape, which V8 property lookups then find cached', async () => {
    shapes.length = 0;
    for (let i = 0; i < 4; i++) await (await fetch(`${base}/shape`)).json();
    expect(shapes).toHaveLength(4);
    // The first ones may still be settling V8's estimate of their size; the last two are as every later one.
    expect(sameShape(shapes[2]!.req, shapes[3]!.req)).toBe(true);
    expect(sameShape(shapes[2]!.res, shapes[3]!.res)).toBe(true);
  });

  it('keeps requests and responses fast objects when garbage is collected between the first ones', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const app = express();
    // Judged as they are answered, not kept: the objects of a server die young, which is what lets
    // a collection end V8's sizing with room for nothing.
    const seen: { req: boolean; res: boolean }[] = [];
    app.get('/', (req, res) => {
      seen.push({ req: fastProperties(req), res: fastProperties(res) });
      res.json({ ok: true });
    });
    const fresh = createHttpServer(app);
    await new Promise<void>((resolve) => fresh.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(fresh.address() as AddressInfo).port}/`;
      // As a server's first requests come while it loads its data: full collections in between.
      for (let i = 0; i < 20; i++) {
        await (await fetch(url)).json();
        if (i < 10) gc();
      }
      expect(seen).toHaveLength(20);
      expect(seen.slice(-5)).toEqual(Array(5).fill({ req: true, res: true }));
    } finally {
      await new Promise((resolve) => fresh.close(resolve));
    }
  });
});

import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createHttpServer } from '../../src/http/http-server';
import { sendJson } from '../../src/rest/json-answer';

describe('sendJson', () => {
  let server: http.Server;
  let base: string;
  const body = { name: 'Ştefan & Söhne <GmbH>', n: 3, list: ['x'.repeat(1200)], none: null };
  beforeAll(async () => {
    const app = express();
    app.get('/ours', (_req, res) => sendJson(res, body));
    app.get('/express', (_req, res) => {
      res.json(body);
    });
    app.get('/created', (_req, res) => sendJson(res.status(201), { ok: true }));
    app.get('/nothing', (_req, res) => sendJson(res, undefined));
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const seen = async (path: string, method = 'GET') => {
    const res = await fetch(`${base}${path}`, { method });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      length: res.headers.get('content-length'),
      text: await res.text(),
    };
  };

  it('sends what express’s res.json sends, for GET and HEAD', async () => {
    const ours = await seen('/ours');
    expect(ours).toEqual(await seen('/express'));
    expect(JSON.parse(ours.text)).toEqual(body);
    expect(Number(ours.length)).toBe(Buffer.byteLength(ours.text));
    const head = await seen('/ours', 'HEAD');
    expect(head).toEqual(await seen('/express', 'HEAD'));
    expect([head.text, head.length]).toEqual(['', ours.length]);
  });

  it('keeps the status set before it, and sends null for nothing', async () => {
    expect(await seen('/created')).toMatchObject({ status: 201, text: '{"ok":true}' });
    expect(await seen('/nothing')).toMatchObject({ status: 200, text: 'null', length: '4' });
  });
});

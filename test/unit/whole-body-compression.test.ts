import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import compression from 'compression';
import express from 'express';
import { rawRequest } from '../support/raw-http';
import {
  compressWhenAccepted,
  compressWholeBodies,
  wholeBodyCoding,
} from '../../src/http/whole-body-compression';

describe('wholeBodyCoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['deflate', null],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['GZIP, BR', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.9, gzip;q=0.9', 'br'],
    ['gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['gzip;q=0.3, identity;q=0.8', null],
    ['gzip;q=0.8, identity;q=0.3', 'gzip'],
    [' br ; q = 1 , gzip', 'br'],
  ])('%p -> %p', (header, expected) => {
    expect(wholeBodyCoding(header)).toBe(expected);
  });
});

describe('compressWholeBodies on its own', () => {
  const big = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `company number ${i}` })) };
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.use(compressWholeBodies({ minBytes: 1024, brotliQuality: 1, gzipLevel: 1 }));
    app.get('/json', (_req, res) => {
      res.json(big);
    });
    app.get('/varied', (_req, res) => {
      res.setHeader('Vary', 'Origin');
      res.json(big);
    });
    app.get('/no-transform', (_req, res) => {
      res.setHeader('Cache-Control', 'no-transform');
      res.json(big);
    });
    app.get('/binary', (_req, res) => {
      res.type('application/octet-stream').send(Buffer.alloc(4096, 7));
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path: string) => rawRequest(`${base}${path}`, { 'accept-encoding': 'br' });

  it('compresses, sets the length and says it varies by Accept-Encoding', async () => {
    for (const [path, vary] of [
      ['/json', 'Accept-Encoding'],
      ['/varied', 'Origin, Accept-Encoding'],
    ] as const) {
      const res = await get(path);
      expect(res.headers['content-encoding']).toBe('br');
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      expect(res.headers.vary).toBe(vary);
      expect(JSON.parse(zlib.brotliDecompressSync(res.body).toString())).toEqual(big);
    }
  });

  it('leaves no-transform answers and types that do not compress as they are', async () => {
    const kept = await get('/no-transform');
    expect(kept.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(kept.body.toString())).toEqual(big);
    const binary = await get('/binary');
    expect(binary.headers['content-encoding']).toBeUndefined();
    expect(binary.body.length).toBe(4096);
  });
});

describe('compressWhenAccepted', () => {
  const big = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `company number ${i}` })) };
  let server: http.Server;
  let base: string;
  /** Requests the stream middleware saw, and whether each answer's `end` was still the response's own. */
  const seen: string[] = [];
  const ownEnd: boolean[] = [];
  beforeAll(async () => {
    const app = express();
    const stream = compression({ threshold: 1024 });
    app.use(
      compressWhenAccepted((req, res, next) => {
        seen.push(String(req.headers['accept-encoding']));
        stream(req, res, next);
      }),
    );
    app.get('/json', (_req, res) => {
      ownEnd.push(Object.prototype.hasOwnProperty.call(res, 'end') === false);
      res.json(big);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    ownEnd.length = 0;
  });

  it('leaves the response untouched for a client that sends no Accept-Encoding, and says it varies', async () => {
    for (const headers of [{}, { 'accept-encoding': '' }] as Record<string, string>[]) {
      const res = await rawRequest(`${base}/json`, headers);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(JSON.parse(res.body.toString())).toEqual(big);
    }
    expect(seen).toEqual([]);
    expect(ownEnd).toEqual([true, true]);
  });

  it('hands a client that sends one to the stream middleware', async () => {
    const res = await rawRequest(`${base}/json`, { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toBe('Accept-Encoding');
    expect(JSON.parse(zlib.gunzipSync(res.body).toString())).toEqual(big);
    const plain = await rawRequest(`${base}/json`, { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(seen).toEqual(['gzip', 'identity']);
    expect(ownEnd).toEqual([false, false]);
  });
});

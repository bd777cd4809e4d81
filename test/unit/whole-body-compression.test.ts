import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import express from 'express';
import { rawRequest } from '../support/raw-http';
import { compressWholeBodies, wholeBodyCoding } from '../../src/http/whole-body-compression';

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

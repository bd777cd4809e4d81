import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { MemoryStore } from 'express-rate-limit';
import { keyRateLimit } from '../../src/http/key-rate-limit';
import type { KeyRateLimitOptions } from '../../src/http/key-rate-limit';

interface Answer {
  status: number;
  rateLimit: string | null;
  policy: string | null;
  retryAfter: string | null;
}

/** An app that takes the key id from a header, limits it and answers 204, or 429 when limited. */
async function serve(o: Omit<KeyRateLimitOptions, 'onLimited'>) {
  const app = express();
  app.use((req, _res, next) => {
    req.keyId = req.header('x-key') ?? undefined;
    next();
  });
  app.use(keyRateLimit({ ...o, onLimited: (_req, res) => void res.status(429).end() }));
  app.get('/', (_req, res) => void res.status(204).end());
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    get: async (key: string): Promise<Answer> => {
      const res = await fetch(base, { headers: { 'x-key': key } });
      return {
        status: res.status,
        rateLimit: res.headers.get('ratelimit'),
        policy: res.headers.get('ratelimit-policy'),
        retryAfter: res.headers.get('retry-after'),
      };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const KEYS = ['env-1', 'env-2', 'env-1', 'env-1', 'env-1', 'env-2', 'env-2', 'env-1', 'env-1'];

describe('keyRateLimit', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each([
    [3, 60],
    [2, 45],
    [5, 7_200],
    [1, 86_400 * 2],
  ])(
    'counts in this process exactly as express-rate-limit counts in its store, headers included (%i per %i s)',
    async (max, windowS) => {
      jest.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
      const local = await serve({ max, windowS });
      const shared = await serve({ max, windowS, store: new MemoryStore() });
      try {
        const fromLocal: Answer[] = [];
        const fromShared: Answer[] = [];
        for (const key of KEYS) {
          fromLocal.push(await local.get(key));
          fromShared.push(await shared.get(key));
        }
        expect(fromLocal).toEqual(fromShared);
        expect(fromLocal.map((a) => a.status)).toContain(429);
        expect(fromLocal[0]!.rateLimit).toMatch(/^"\d+-in-\d+(sec|min|hrs?|days?)"; r=\d+; t=\d+$/);
      } finally {
        await local.close();
        await shared.close();
      }
    },
  );

  it('starts a key over once its window has passed, and tells how long is left', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
    const t = await serve({ max: 2, windowS: 60 });
    try {
      expect((await t.get('k')).rateLimit).toBe('"2-in-1min"; r=1; t=60');
      now.mockReturnValue(1_800_000_000_000 + 20_500);
      expect((await t.get('k')).rateLimit).toBe('"2-in-1min"; r=0; t=40');
      const refused = await t.get('k');
      expect(refused).toMatchObject({ status: 429, retryAfter: '40' });
      expect((await t.get('other')).status).toBe(204);
      now.mockReturnValue(1_800_000_000_000 + 60_000);
      const again = await t.get('k');
      expect(again).toMatchObject({ status: 204, rateLimit: '"2-in-1min"; r=1; t=60' });
      expect(again.policy).toMatch(/^"2-in-1min"; q=2; w=60; pk=:[A-Za-z0-9+/=]+:$/);
    } finally {
      await t.close();
    }
  });

  it("hands the counting library's warnings to the server's log, not to the console", async () => {
    const warned: unknown[] = [];
    const consoleWarn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    // A limit of 0 is a setting the library warns of (the server's settings allow 1 and more).
    const t = await serve({
      windowS: 60,
      max: 0,
      store: new MemoryStore(),
      onWarning: (e) => warned.push(e),
    });
    try {
      await t.get('k');
      expect(warned).toEqual([expect.objectContaining({ code: 'WRN_ERL_MAX_ZERO' })]);
      expect(consoleWarn).not.toHaveBeenCalled();
    } finally {
      consoleWarn.mockRestore();
      await t.close();
    }
  });
});

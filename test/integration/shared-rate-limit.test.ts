import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ROOT } from '../support/paths';
import { Relay } from '../support/relay';
import { recordingLogger, startTestServer } from '../support/server';
import type { TestServer } from '../support/server';
import { REDIS_HINT, describeWithService, testRedisUrl } from '../support/services';

/**
 * Opens the shared rate-limit store in a process of its own (test/support/rate-limit-close-child.js)
 * on `target` (a Redis URL, `dropped` or `refused`), counts a hit and closes it: the hits counted and
 * how long the process lived after the close began. A stopping server closes the store; its process
 * should then end at once, whether Redis answers or not.
 */
function closeIn(target: string): { hits: number | null; exitMs: number } {
  const r = spawnSync(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'test/support/ts-register.js'),
      path.join(ROOT, 'test/support/rate-limit-close-child.js'),
      target,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout.trim()) as { hits: number | null; exitMs: number };
}

describeWithService('rate limits shared through Redis', testRedisUrl(), REDIS_HINT, (url) => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const redis = new Redis(url);
    // Counters of earlier runs of this test would count against its key.
    const stale = [...(await redis.keys('tiergraph:rl:*')), ...(await redis.keys('tiergraph:rl-auth:*'))];
    if (stale.length > 0) await redis.del(...stale);
    await redis.quit();
    const env = {
      RATE_LIMIT_MAX: '4',
      RATE_LIMIT_WINDOW_S: '60',
      RATE_LIMIT_REDIS_URL: url,
      AUTH_FAILURE_MAX: '3',
      TRUST_PROXY: '1',
    };
    a = await startTestServer(env);
    b = await startTestServer(env);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('counts one key across two instances, as behind a load balancer', async () => {
    const statuses: number[] = [];
    for (const t of [a, b, a, b, a]) statuses.push((await t.get('/v1/edges/e1')).status);
    // Each instance alone saw at most 3 requests, below the limit of 4: only a shared count refuses the fifth.
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  it('counts failed authentications of one address across both instances', async () => {
    const bad = { 'X-SERVICE-KEY': 'wrong-key-wrong-key', 'X-Forwarded-For': '192.0.2.33' };
    const statuses: number[] = [];
    for (const t of [a, b, a, b]) statuses.push((await t.get('/v1/edges/e1', bad)).status);
    expect(statuses).toEqual([403, 403, 403, 429]);
  });

  it('lets the process end within a second of closing the store after counting in Redis', () => {
    const { hits, exitMs } = closeIn(url);
    expect(hits).toBeGreaterThanOrEqual(1);
    expect(exitMs).toBeLessThan(1000);
  });
});

describe('rate limits shared through a Redis out of reach', () => {
  let t: TestServer;
  const { log, lines } = recordingLogger();
  beforeAll(async () => {
    // Nothing listens on port 1: every command fails.
    t = await startTestServer(
      { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '60', RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1/0' },
      'test-small.cypher',
      log,
    );
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers, unlimited and at once, and says once that the counters are out of reach', async () => {
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 4; i++) statuses.push((await t.get('/v1/edges/e1')).status);
    // Over the limit of 2, yet answered: no counter to count them by.
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(Date.now() - started).toBeLessThan(4000);
    const said = lines.filter((l) => /shared rate-limit counters unavailable/.test(l.msg ?? ''));
    expect(said).toHaveLength(1);
    expect(
      lines.filter((l) => /RATE_LIMIT_REDIS_URL\) out of reach/.test(l.msg ?? '')).length,
    ).toBeGreaterThan(0);
  });
});

describeWithService(
  'rate limits shared through a Redis that goes away',
  testRedisUrl(),
  REDIS_HINT,
  (url) => {
    jest.setTimeout(30_000);
    let t: TestServer;
    let relay: Relay;
    const { log, lines } = recordingLogger();
    beforeAll(async () => {
      const target = new URL(url);
      relay = new Relay(target.hostname, Number(target.port || 6379));
      await relay.open();
      t = await startTestServer(
        { RATE_LIMIT_MAX: '1000', RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${relay.port}/12` },
        'test-small.cypher',
        log,
      );
    });
    afterAll(async () => {
      await t?.stop();
      await relay.cut();
    });

    it('answers at once, refused keys included, however long Redis has been away, and says so once', async () => {
      // Counted in Redis while it answers.
      expect((await t.get('/v1/edges/e1')).headers.get('ratelimit')).toMatch(/^"1000-in-1min"; r=\d+/);
      await relay.cut();
      // The client's waits between attempts to reconnect grow with each failure, to seconds: a request
      // whose counter waited for the next attempt would wait about that long.
      await new Promise((r) => setTimeout(r, 6000));
      const begun = Date.now();
      for (let i = 0; i < 6; i++) {
        const res =
          i % 2
            ? await t.get('/v1/edges/e1')
            : await fetch(`${t.base}/v1/edges/e1`, {
                headers: { 'X-SERVICE-KEY': 'not-a-key-of-this-server-0' },
              });
        expect(res.status).toBe(i % 2 ? 200 : 403);
      }
      // Some 200 ms a counter by now when they waited (minutes into an outage, up to 2 s); a few ms without.
      expect(Date.now() - begun).toBeLessThan(600);
      for (const words of [
        /failed-authentication counters unavailable/,
        /shared rate-limit counters unavailable/,
      ])
        expect(lines.filter((l) => words.test(l.msg ?? '')).length).toBeLessThanOrEqual(1);
    });
  },
);

describe('rate limits shared through a Redis out of reach: closing the store', () => {
  // Before, 2 s (the client waited for the end of a socket already closed) to 4 s (and for its
  // commands of a dropped connection to time out).
  it.each(['dropped', 'refused'])('lets the process end within a second of the close (%s)', (target) => {
    const { hits, exitMs } = closeIn(target);
    expect(hits).toBeNull();
    expect(exitMs).toBeLessThan(1000);
  });
});

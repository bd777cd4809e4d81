import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CALLBACK_DELIVERY_HEADER,
  CALLBACK_SIGNATURE_HEADER,
  CallbackSender,
  signCallback,
  verifyCallbackSignature,
} from '../../src/jobs/callbacks';
import type { CallbackSenderOptions } from '../../src/jobs/callbacks';

describe('callback signatures', () => {
  const secret = 's3cret-value-for-tests';
  const body = JSON.stringify({ run_id: 7, result_state: 'SUCCESS' });

  it('has the documented format and verifies', () => {
    const header = signCallback(secret, 1_700_000_000.9, body);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyCallbackSignature(secret, header, body, 1_700_000_010)).toBe(true);
  });

  it('rejects a changed body, another secret, a changed timestamp or a garbled header', () => {
    const header = signCallback(secret, 1_700_000_000, body);
    const now = 1_700_000_000;
    expect(verifyCallbackSignature(secret, header, body.replace('7', '8'), now)).toBe(false);
    expect(verifyCallbackSignature('another-secret', header, body, now)).toBe(false);
    expect(verifyCallbackSignature(secret, header.replace('t=1700000000', 't=1700000001'), body, now)).toBe(
      false,
    );
    expect(verifyCallbackSignature(secret, header.slice(0, -1), body, now)).toBe(false);
    expect(verifyCallbackSignature(secret, '', body, now)).toBe(false);
    expect(verifyCallbackSignature(secret, 'v1=' + header.split('v1=')[1], body, now)).toBe(false);
  });

  it('rejects stale and far-future timestamps outside the tolerance', () => {
    const header = signCallback(secret, 1_000, body);
    expect(verifyCallbackSignature(secret, header, body, 1_300)).toBe(true);
    expect(verifyCallbackSignature(secret, header, body, 1_301)).toBe(false);
    expect(verifyCallbackSignature(secret, header, body, 699)).toBe(false);
    expect(verifyCallbackSignature(secret, header, body, 1_060, 30)).toBe(false);
  });

  it('accepts any of several v1 signatures (secret rotation)', () => {
    const fromOld = signCallback('old-secret', 1_000, body);
    const fromNew = signCallback(secret, 1_000, body);
    const both = `${fromOld},v1=${fromNew.split('v1=')[1]}`;
    expect(verifyCallbackSignature(secret, both, body, 1_000)).toBe(true);
    expect(verifyCallbackSignature('old-secret', both, body, 1_000)).toBe(true);
    expect(verifyCallbackSignature('third', both, body, 1_000)).toBe(false);
  });
});

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: Received, res: http.ServerResponse, index: number) => void;

/** A local receiver that records every request and answers with the handler of the test. */
class Receiver {
  readonly requests: Received[] = [];
  private readonly server: http.Server;
  handler: Handler = (_req, res) => res.writeHead(204).end();

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: Received = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(received);
        this.handler(received, res, this.requests.length - 1);
      });
    });
  }

  async start(): Promise<URL> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return new URL(`http://127.0.0.1:${port}/hook?token=abc`);
  }

  async stop(): Promise<void> {
    // Requests a test left unanswered would keep close() waiting.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const SECRET = 'callback-secret-for-tests';

describe('CallbackSender', () => {
  let receiver: Receiver;
  let url: URL;
  let sleeps: number[];
  let senders: CallbackSender[];
  const logs: { level: string; msg: string; obj: object }[] = [];

  const sender = (options: Partial<CallbackSenderOptions> = {}): CallbackSender => {
    const s = new CallbackSender({
      secret: SECRET,
      baseDelayMs: 10,
      maxAttempts: 4,
      timeoutMs: 5000,
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      log: {
        info: (obj, msg) => logs.push({ level: 'info', msg, obj }),
        warn: (obj, msg) => logs.push({ level: 'warn', msg, obj }),
      },
      ...options,
    });
    senders.push(s);
    return s;
  };

  beforeEach(async () => {
    receiver = new Receiver();
    url = await receiver.start();
    sleeps = [];
    senders = [];
    logs.length = 0;
  });

  afterEach(async () => {
    await Promise.all(senders.map((s) => s.close()));
    await receiver.stop();
  });

  it('posts signed JSON once when the receiver answers 2xx', async () => {
    const payload = { run_id: 42, life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' };
    const result = await sender().deliver(url, payload);

    expect(result).toEqual({ delivered: true, attempts: 1, lastStatus: 204, lastError: null });
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook?token=abc');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('tiergraph');
    expect(req.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(JSON.parse(req.body)).toEqual(payload);
    const signature = req.headers[CALLBACK_SIGNATURE_HEADER.toLowerCase()];
    expect(typeof signature).toBe('string');
    const now = Math.floor(Date.now() / 1000);
    expect(verifyCallbackSignature(SECRET, signature as string, req.body, now)).toBe(true);
    expect(verifyCallbackSignature('wrong-secret', signature as string, req.body, now)).toBe(false);
    expect(sleeps).toEqual([]);
    expect(logs.some((l) => l.msg === 'callback delivered')).toBe(true);
    // The receiver's query string may hold its own token; it stays out of logs.
    expect(JSON.stringify(logs)).not.toContain('token=abc');
  });

  it('retries after a 500 with the same delivery id and a fresh signature', async () => {
    receiver.handler = (_req, res, i) => res.writeHead(i === 0 ? 500 : 200).end('ok');
    const result = await sender().deliver(url, { run_id: 1 });

    expect(result).toEqual({ delivered: true, attempts: 2, lastStatus: 200, lastError: null });
    expect(receiver.requests).toHaveLength(2);
    const [first, second] = receiver.requests;
    expect(second!.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()]).toBe(
      first!.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()],
    );
    expect(second!.body).toBe(first!.body);
    const now = Math.floor(Date.now() / 1000);
    for (const req of receiver.requests) {
      const header = req.headers[CALLBACK_SIGNATURE_HEADER.toLowerCase()] as string;
      expect(verifyCallbackSignature(SECRET, header, req.body, now)).toBe(true);
    }
    // First retry waits between 0 and baseDelayMs (full jitter).
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(0);
    expect(sleeps[0]).toBeLessThanOrEqual(10);
  });

  it('gives each delivery its own id', async () => {
    const s = sender();
    await s.deliver(url, { run_id: 1 });
    await s.deliver(url, { run_id: 2 });
    const ids = receiver.requests.map((r) => r.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()]);
    expect(new Set(ids).size).toBe(2);
  });

  it('honours Retry-After in seconds on 429', async () => {
    receiver.handler = (_req, res, i) =>
      i === 0 ? res.writeHead(429, { 'retry-after': '7' }).end() : res.writeHead(200).end();
    const result = await sender({ maxDelayMs: 60_000 }).deliver(url, { run_id: 1 });
    expect(result.delivered).toBe(true);
    expect(result.attempts).toBe(2);
    expect(sleeps).toEqual([7000]);
  });

  it('honours Retry-After as an HTTP date, capped by maxDelayMs', async () => {
    const inThirtySeconds = new Date(Date.now() + 30_000).toUTCString();
    receiver.handler = (_req, res, i) => {
      if (i === 0) res.writeHead(503, { 'retry-after': inThirtySeconds }).end();
      else if (i === 1) res.writeHead(429, { 'retry-after': '3600' }).end();
      else res.writeHead(200).end();
    };
    const result = await sender({ maxDelayMs: 60_000 }).deliver(url, { run_id: 1 });
    expect(result).toMatchObject({ delivered: true, attempts: 3 });
    expect(sleeps).toHaveLength(2);
    // HTTP dates have whole-second resolution, and some time passes before the header is read.
    expect(sleeps[0]).toBeGreaterThan(20_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
    expect(sleeps[1]).toBe(60_000);
  });

  it.each([408, 409, 425, 429, 502])('retries status %d', async (status) => {
    receiver.handler = (_req, res, i) => res.writeHead(i === 0 ? status : 200).end();
    const result = await sender().deliver(url, { run_id: 1 });
    expect(result).toMatchObject({ delivered: true, attempts: 2 });
  });

  it.each([400, 401, 404, 410, 422])('does not retry a permanent %d', async (status) => {
    receiver.handler = (_req, res) => res.writeHead(status).end('no');
    const result = await sender().deliver(url, { run_id: 1 });
    expect(result).toEqual({
      delivered: false,
      attempts: 1,
      lastStatus: status,
      lastError: `HTTP ${status}`,
    });
    expect(receiver.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(logs.some((l) => l.level === 'warn')).toBe(true);
  });

  it('does not follow a redirect and does not retry it', async () => {
    receiver.handler = (req, res) =>
      req.url.startsWith('/hook') ? res.writeHead(307, { location: '/elsewhere' }).end() : res.end();
    const result = await sender().deliver(url, { run_id: 1 });
    expect(result).toMatchObject({ delivered: false, attempts: 1, lastStatus: 307 });
    expect(result.lastError).toMatch(/redirect/);
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook?token=abc']);
  });

  it('retries an attempt that times out', async () => {
    // The first request is never answered; the receiver's stop() drops it.
    receiver.handler = (_req, res, i) => {
      if (i > 0) res.writeHead(200).end();
    };
    const result = await sender({ timeoutMs: 1000 }).deliver(url, { run_id: 1 });
    expect(result).toEqual({ delivered: true, attempts: 2, lastStatus: 200, lastError: null });
    expect(receiver.requests).toHaveLength(2);
    const retryLog = logs.find((l) => l.msg === 'callback attempt failed; retrying');
    expect(retryLog?.obj).toMatchObject({ err: 'no response within 1000 ms', status: null });
  });

  it('gives up after maxAttempts with jittered, growing, capped waits', async () => {
    receiver.handler = (_req, res) => res.writeHead(503).end();
    const result = await sender({ maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300 }).deliver(url, {
      run_id: 1,
    });
    expect(result).toEqual({ delivered: false, attempts: 5, lastStatus: 503, lastError: 'HTTP 503' });
    expect(receiver.requests).toHaveLength(5);
    // No wait after the last attempt.
    expect(sleeps).toHaveLength(4);
    const bounds = [100, 200, 300, 300];
    sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(bounds[i]!);
    });
    expect(logs.some((l) => l.level === 'warn' && l.msg === 'callback not delivered; giving up')).toBe(true);
  });

  it('retries network errors and reports the last one', async () => {
    const closed = new Receiver();
    const deadUrl = await closed.start();
    await closed.stop();
    const result = await sender({ maxAttempts: 3 }).deliver(deadUrl, { run_id: 1 });
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(3);
    expect(result.lastStatus).toBeNull();
    expect(result.lastError).toMatch(/ECONNREFUSED/);
    expect(sleeps).toHaveLength(2);
  });

  it('stops waiting for a retry when the signal aborts (real sleep)', async () => {
    const controller = new AbortController();
    // A Retry-After of an hour makes the wait certain (full jitter alone could pick a tiny one).
    receiver.handler = (_req, res) => res.writeHead(503, { 'retry-after': '3600' }).end();
    const s = sender({
      sleep: undefined,
      maxDelayMs: 3_600_000,
      log: {
        // The retry notice comes just before the wait starts; the abort lands during the wait.
        info: (_obj, msg) => {
          if (msg === 'callback attempt failed; retrying') setImmediate(() => controller.abort());
        },
        warn: () => undefined,
      },
    });
    const result = await s.deliver(url, { run_id: 1 }, controller.signal);
    expect(result).toMatchObject({ delivered: false, attempts: 1, lastStatus: 503 });
    expect(result.lastError).toMatch(/stopped/);
    expect(receiver.requests).toHaveLength(1);
  }, 10_000);

  it('passes the stop signal to an injected sleep', async () => {
    const controller = new AbortController();
    receiver.handler = (_req, res) => res.writeHead(500).end();
    let sleeping!: () => void;
    const asleep = new Promise<void>((resolve) => (sleeping = resolve));
    const s = sender({
      // Wakes only on abort: the delivery can end only through the signal.
      sleep: (_ms, signal) =>
        new Promise<void>((resolve) => {
          signal?.addEventListener('abort', () => resolve());
          sleeping();
        }),
    });
    const delivery = s.deliver(url, { run_id: 1 }, controller.signal);
    await asleep;
    controller.abort();
    const result = await delivery;
    expect(result).toMatchObject({ delivered: false, attempts: 1, lastStatus: 500 });
    expect(result.lastError).toMatch(/stopped/);
  }, 10_000);

  it('aborts an in-flight request and refuses new deliveries after close()', async () => {
    const s = sender({ timeoutMs: 3_600_000 });
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    receiver.handler = () => arrived(); // never answers
    const delivery = s.deliver(url, { run_id: 1 });
    await requestArrived;
    await s.close();
    const result = await delivery;
    expect(result).toMatchObject({ delivered: false, attempts: 1, lastStatus: null });
    expect(result.lastError).toMatch(/stopped/);

    const after = await s.deliver(url, { run_id: 2 });
    expect(after).toMatchObject({ delivered: false, attempts: 0 });
    expect(receiver.requests).toHaveLength(1);
  }, 10_000);

  it('does not send when aborted before the first attempt', async () => {
    const result = await sender().deliver(url, { run_id: 1 }, AbortSignal.abort());
    expect(result).toMatchObject({ delivered: false, attempts: 0 });
    expect(receiver.requests).toHaveLength(0);
  });

  it('resolves instead of throwing for an unserialisable payload or a failing fetch', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const bad = await sender().deliver(url, circular);
    expect(bad).toMatchObject({ delivered: false, attempts: 0 });
    expect(bad.lastError).toMatch(/not serialisable/);

    const broken = sender({ fetch: () => Promise.reject(new Error('boom')), maxAttempts: 2 });
    const result = await broken.deliver(url, { run_id: 1 });
    expect(result).toEqual({ delivered: false, attempts: 2, lastStatus: null, lastError: 'boom' });
  });
});

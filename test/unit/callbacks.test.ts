import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  CALLBACK_DELIVERY_HEADER,
  CALLBACK_SIGNATURE_HEADER,
  CallbackSender,
  keyCallbackSecret,
  signCallback,
  verifyCallbackSignature,
} from '../../src/jobs/callbacks';
import type { CallbackSenderOptions } from '../../src/jobs/callbacks';
import { isPublicAddress } from '../../src/domain/public-address';

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

  it("signs with the server's secret and the key's own, which verifies that key's callbacks only", () => {
    const forA = keyCallbackSecret(secret, 'key-a');
    const forB = keyCallbackSecret(secret, 'key-b');
    expect(new Set([secret, forA, forB, keyCallbackSecret('another-server', 'key-a')]).size).toBe(4);
    expect(keyCallbackSecret(secret, 'key-a')).toBe(forA);
    expect(forA).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const header = signCallback([forA, secret], 1_000, body);
    expect(header).toMatch(/^t=1000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyCallbackSignature(secret, header, body, 1_000)).toBe(true);
    expect(verifyCallbackSignature(forA, header, body, 1_000)).toBe(true);
    // B's holder accepts nothing signed for A, and holding B's secret signs nothing A's holder accepts.
    expect(verifyCallbackSignature(forB, header, body, 1_000)).toBe(false);
    expect(verifyCallbackSignature(forA, signCallback(forB, 1_000, body), body, 1_000)).toBe(false);
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

// Every test below runs with both clients: the global fetch, and the sender's own client that checks the
// addresses a host resolves to (here one that lets all through).
describe.each([
  ['the global fetch', {}],
  ['its address-checking client', { addresses: () => true }],
] as [string, Partial<CallbackSenderOptions>][])('CallbackSender with %s', (_client, mode) => {
  let receiver: Receiver;
  let url: URL;
  let senders: CallbackSender[];
  const ID = '0b7c6f1e-5a2d-4c3b-9e8f-1a2b3c4d5e6f';

  const sender = (options: Partial<CallbackSenderOptions> = {}): CallbackSender => {
    const s = new CallbackSender({
      secret: SECRET,
      baseDelayMs: 10,
      maxAttempts: 4,
      timeoutMs: 5000,
      ...mode,
      ...options,
    });
    senders.push(s);
    return s;
  };

  beforeEach(async () => {
    receiver = new Receiver();
    url = await receiver.start();
    senders = [];
  });

  afterEach(async () => {
    await Promise.all(senders.map((s) => s.close()));
    await receiver.stop();
  });

  it('posts signed JSON with the delivery id and reports a 2xx as delivered', async () => {
    const body = JSON.stringify({ run_id: '42', state: { life_cycle_state: 'TERMINATED' } });
    const outcome = await sender().attempt(url, body, ID);

    expect(outcome).toEqual({ kind: 'delivered', status: 204 });
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook?token=abc');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('tiergraph');
    expect(req.headers[CALLBACK_DELIVERY_HEADER.toLowerCase()]).toBe(ID);
    expect(req.body).toBe(body);
    const signature = req.headers[CALLBACK_SIGNATURE_HEADER.toLowerCase()];
    expect(typeof signature).toBe('string');
    const now = Math.floor(Date.now() / 1000);
    expect(verifyCallbackSignature(SECRET, signature as string, req.body, now)).toBe(true);
    expect(verifyCallbackSignature('wrong-secret', signature as string, req.body, now)).toBe(false);
  });

  it.each([408, 409, 425, 429, 500, 502, 503])('calls status %d worth a retry', async (status) => {
    receiver.handler = (_req, res) => res.writeHead(status).end();
    expect(await sender().attempt(url, '{}', ID)).toEqual({
      kind: 'retry',
      status,
      error: `HTTP ${status}`,
      retryAfterMs: null,
    });
  });

  it.each([400, 401, 404, 410, 422])('calls status %d a refusal', async (status) => {
    receiver.handler = (_req, res) => res.writeHead(status).end('no');
    expect(await sender().attempt(url, '{}', ID)).toEqual({
      kind: 'refused',
      status,
      error: `HTTP ${status}`,
    });
  });

  it('reads Retry-After in seconds and as an HTTP date', async () => {
    const inThirtySeconds = new Date(Date.now() + 30_000).toUTCString();
    receiver.handler = (_req, res, i) =>
      res.writeHead(i === 0 ? 429 : 503, { 'retry-after': i === 0 ? '7' : inThirtySeconds }).end();
    const s = sender();
    expect(await s.attempt(url, '{}', ID)).toMatchObject({ kind: 'retry', retryAfterMs: 7000 });
    const dated = await s.attempt(url, '{}', ID);
    expect(dated.kind).toBe('retry');
    // HTTP dates have whole-second resolution, and some time passes before the header is read.
    const ms = dated.kind === 'retry' ? dated.retryAfterMs : null;
    expect(ms).toBeGreaterThan(20_000);
    expect(ms).toBeLessThanOrEqual(30_000);
  });

  it('takes a status no HTTP status is (699) as a failure worth a retry, without falling over', async () => {
    const odd = net.createServer((s) =>
      s.once('data', () => s.end('HTTP/1.1 699 Odd\r\ncontent-length: 0\r\n\r\n')),
    );
    await new Promise<void>((r) => odd.listen(0, '127.0.0.1', r));
    try {
      const at = new URL(`http://127.0.0.1:${(odd.address() as AddressInfo).port}/hook`);
      expect(await sender().attempt(at, '{}', ID)).toMatchObject({ kind: 'retry', status: 699 });
    } finally {
      await new Promise((r) => odd.close(r));
    }
  });

  it('closes an answer whose body never ends once its status is read', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const connections = new Set<net.Socket>();
    const endless = net.createServer((s) => {
      connections.add(s);
      s.on('close', () => connections.delete(s));
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
        const drip = setInterval(() => s.write('1\r\nx\r\n'), 10);
        s.on('close', () => {
          clearInterval(drip);
          closed();
        });
        s.on('error', () => undefined);
      });
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    try {
      const at = new URL(`http://127.0.0.1:${(endless.address() as AddressInfo).port}/hook`);
      expect(await sender().attempt(at, '{}', ID)).toEqual({ kind: 'delivered', status: 200 });
      await gone;
    } finally {
      // The global fetch (Node's undici) opens a new connection after the one its cancel closed, and
      // leaves it idle for seconds: a net server has no closeAllConnections, so it is closed here.
      const shut = new Promise((r) => endless.close(r));
      for (const c of connections) c.destroy();
      await shut;
    }
  });

  it('does not follow a redirect', async () => {
    receiver.handler = (req, res) =>
      req.url.startsWith('/hook') ? res.writeHead(307, { location: '/elsewhere' }).end() : res.end();
    const outcome = await sender().attempt(url, '{}', ID);
    expect(outcome).toEqual({ kind: 'refused', status: 307, error: 'HTTP 307 redirect not followed' });
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook?token=abc']);
  });

  it('calls a timeout, a refused connection and a failing fetch worth a retry', async () => {
    receiver.handler = () => undefined; // never answers
    expect(await sender({ timeoutMs: 300 }).attempt(url, '{}', ID)).toEqual({
      kind: 'retry',
      status: null,
      error: 'no response within 300 ms',
      retryAfterMs: null,
    });
    const closed = new Receiver();
    const deadUrl = await closed.start();
    await closed.stop();
    const refused = await sender().attempt(deadUrl, '{}', ID);
    expect(refused).toMatchObject({ kind: 'retry', status: null });
    expect(refused.kind === 'retry' && refused.error).toMatch(/ECONNREFUSED/);
    const broken = sender({ fetch: () => Promise.reject(new Error('boom')) });
    expect(await broken.attempt(url, '{}', ID)).toMatchObject({ kind: 'retry', error: 'boom' });
  });

  it('aborts an attempt in flight at close() and makes none afterwards', async () => {
    const s = sender({ timeoutMs: 3_600_000 });
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    receiver.handler = () => arrived(); // never answers
    const attempt = s.attempt(url, '{}', ID);
    await requestArrived;
    await s.close();
    expect(await attempt).toMatchObject({ kind: 'retry', error: 'the server is shutting down' });
    expect(await s.attempt(url, '{}', ID)).toMatchObject({ kind: 'retry' });
    expect(receiver.requests).toHaveLength(1);
  }, 10_000);

  it('waits between half and all of a bound that doubles per failure, capped', () => {
    const at = (random: number) => sender({ baseDelayMs: 100, maxDelayMs: 300, random: () => random });
    expect([1, 2, 3, 4, 5].map((n) => at(0).retryDelayMs(n, null))).toEqual([50, 100, 150, 150, 150]);
    expect([1, 2, 3, 4].map((n) => at(0.999999).retryDelayMs(n, null))).toEqual([99, 199, 299, 299]);
  });

  it("takes the receiver's Retry-After over the schedule, capped", () => {
    const s = sender({ baseDelayMs: 100, maxDelayMs: 60_000 });
    expect(s.retryDelayMs(1, 7000)).toBe(7000);
    expect(s.retryDelayMs(3, 3_600_000)).toBe(60_000);
  });

  it('defaults to 10 attempts over about an hour and a half at most', () => {
    const s = new CallbackSender({ secret: SECRET, random: () => 0.999999 });
    expect(s.maxAttempts).toBe(10);
    const waits = Array.from({ length: s.maxAttempts - 1 }, (_, i) => s.retryDelayMs(i + 1, null));
    expect(waits[0]).toBe(9999);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThan(90 * 60 * 1000);
  });
});

describe('CallbackSender with public addresses only', () => {
  let receiver: Receiver;
  let url: URL;
  const s = new CallbackSender({ secret: SECRET, timeoutMs: 5000, addresses: isPublicAddress });

  beforeEach(async () => {
    receiver = new Receiver();
    url = await receiver.start();
  });
  afterEach(() => receiver.stop());
  afterAll(() => s.close());

  it('refuses, without a retry or a request, an address written in the URL that is not public', async () => {
    expect(await s.attempt(url, '{}', 'id')).toEqual({
      kind: 'refused',
      status: null,
      error: '127.0.0.1 is an address callbacks may not reach on this server',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a host name that resolves to an address that is not public', async () => {
    const named = new URL(url);
    named.hostname = 'localhost';
    const outcome = await s.attempt(named, '{}', 'id');
    expect(outcome).toMatchObject({ kind: 'refused', status: null });
    expect(outcome.kind === 'refused' && outcome.error).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1), which callbacks may not reach on this server$/,
    );
    expect(receiver.requests).toHaveLength(0);
  });
});

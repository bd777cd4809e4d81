import net from 'node:net';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

/**
 * Sends `bytes` on a connection of its own and gives what came back once the server closed it, or
 * after `waitMs` (an answer that never comes then reads as nothing).
 */
function exchange(bytes: string, waitMs = 5000): Promise<string> {
  const { port } = new URL(t.base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', done);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(bytes);
  });
}

/** The status and problem document of a raw HTTP answer. */
function parsed(answer: string): { status: number; type: string | undefined; body: Record<string, unknown> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const type = /^content-type: (.*)$/im.exec(head)?.[1]?.trim();
  return { status, type, body: JSON.parse(body) as Record<string, unknown> };
}

describe('requests the server cannot read', () => {
  it('answers headers over the limit with 431 and a problem document', async () => {
    const answer = parsed(
      await exchange(`GET /v1/companies/?name=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.type).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE' });
    expect(answer.body.detail).toMatch(/at most [\d,]+ bytes/);
  });

  it('answers bytes that are not HTTP with 400 and a problem document', async () => {
    const answer = parsed(await exchange('HELLO THERE\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.type).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it('refuses a body declared far over the limit without reading it, and closes', async () => {
    const answer = await exchange(
      'POST /v1/tierviewjob/ HTTP/1.1\r\nHost: x\r\n' +
        `X-SERVICE-KEY: ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n`,
    );
    // Before, the answer waited for the whole declared body, which never came.
    expect(answer).not.toBe('');
    const { status, body } = parsed(answer);
    expect(status).toBe(413);
    expect(body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(answer).toMatch(/^connection: close$/im);
  });
});

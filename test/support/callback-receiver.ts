import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link CallbackReceiver} got. */
export interface ReceivedCallback {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A local HTTP endpoint that records every callback it gets and answers each
 * with the status `answer` returns for its index (null: never answer).
 */
export class CallbackReceiver {
  readonly requests: ReceivedCallback[] = [];
  answer: (index: number) => number | null = () => 204;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index = this.requests.length;
      this.requests.push({
        at: Date.now(),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const status = this.answer(index);
      if (status !== null) res.writeHead(status).end();
    });
  });

  /** Starts listening; resolves with the URL to register as `callback_url`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `n` requests arrived; rejects after `ms`. */
  async waitFor(n: number, ms = 20_000): Promise<ReceivedCallback[]> {
    const end = Date.now() + ms;
    while (this.requests.length < n) {
      if (Date.now() > end)
        throw new Error(`${n} callbacks expected within ${ms} ms, got ${this.requests.length}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.requests;
  }

  async stop(): Promise<void> {
    // Requests a test left unanswered would keep close() waiting.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

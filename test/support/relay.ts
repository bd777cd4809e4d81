import net from 'node:net';

/** A TCP relay to `host:port` that can be cut (its connections dropped, nothing accepted) and restored. */
export class Relay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly host: string,
    private readonly target: number,
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target, this.host);
      const pair = [client, upstream];
      for (const s of pair) {
        this.sockets.add(s);
        // Either side gone takes the other with it: a connection left open on one side only would
        // hold a driver's request unanswered for ever, which no real outage or restart does.
        s.on('close', () => {
          this.sockets.delete(s);
          for (const other of pair) other.destroy();
        });
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  }
}

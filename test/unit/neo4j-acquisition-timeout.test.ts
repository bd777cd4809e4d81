import net from 'node:net';
import { AppError } from '../../src/domain/errors';
import { createDriver } from '../../src/store/neo4j/driver';
import { Neo4jExecutor } from '../../src/store/neo4j/executor';
import type { CypherQuery } from '../../src/store/cypher-files';

/**
 * A database that takes connections and never answers them (starting, hung, or cut off behind a
 * proxy that still accepts): the real driver's pool gives up on a connection after
 * connectionAcquisitionTimeout, with an error that carries no status code.
 */
describe('Neo4j: a pool that gives no connection in time', () => {
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  let port = 0;

  beforeAll(async () => {
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('is 503 UNAVAILABLE with a time to come back, as an outage is, not an internal error', async () => {
    const driver = createDriver({
      uri: `bolt://127.0.0.1:${port}`,
      user: 'neo4j',
      password: 'unused',
      maxPoolSize: 2,
      acquireTimeoutMs: 300,
      connectTimeoutMs: 30_000,
    });
    const executor = new Neo4jExecutor(driver, { database: 'neo4j', queryTimeoutMs: 0 });
    const query: CypherQuery = {
      name: 'test/one',
      text: 'RETURN 1 AS one',
      params: new Map(),
      literals: new Map(),
      file: 'test',
    };
    try {
      const started = Date.now();
      const err: unknown = await executor.read(query).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'UNAVAILABLE', retryAfterS: 5, query: 'test/one' });
      // The driver's own error stays beside it, for the log.
      expect(String((err as { cause?: Error }).cause?.message)).toMatch(/^Connection acquisition timed out/);
    } finally {
      await driver.close().catch(() => undefined);
    }
  });
});

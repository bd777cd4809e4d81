import type { CypherQuery } from '../cypher-files';
import { READ, WRITE, createBookmarkManager, mapDriverError, toDriverParams, toRow } from './driver';
import type { BookmarkManager, Driver, Session } from './driver';

export type Row = Record<string, unknown>;

export interface ExecutorOptions {
  database: string;
  /** Server-side limit of a read transaction in ms; 0 leaves the server's setting. */
  queryTimeoutMs: number;
}

/**
 * The one owner of Neo4j sessions. Every call opens a session with an explicit
 * database and access mode, runs one transaction labelled with the query's name
 * (visible in `SHOW TRANSACTIONS` and the query log), and closes the session in
 * `finally`. READ sessions on a `neo4j://` URI are routed to followers and read
 * replicas; WRITE sessions to the leader.
 *
 * All sessions share one bookmark manager: a read that follows a write of this
 * process (the generation read after a migration, the search-index rebuild after
 * an import) waits on the replica it is routed to until that write is there,
 * instead of reading what the replica had before.
 */
export class Neo4jExecutor {
  private readonly bookmarks: BookmarkManager = createBookmarkManager();

  constructor(
    private readonly driver: Driver,
    private readonly options: ExecutorOptions,
  ) {}

  // READ and WRITE are both the driver's access-mode strings.
  private session(mode: typeof READ, extra: { disableAutoCommitRetries?: boolean } = {}): Session {
    return this.driver.session({
      database: this.options.database,
      defaultAccessMode: mode,
      bookmarkManager: this.bookmarks,
      ...extra,
    });
  }

  private txConfig(name: string, timeoutMs = this.options.queryTimeoutMs) {
    return { metadata: { app: 'tiergraph', query: name }, ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}) };
  }

  /** Runs a read query (retried by the driver on transient failures) and returns its rows. */
  async read(query: CypherQuery, params: Record<string, unknown> = {}): Promise<Row[]> {
    const driverParams = toDriverParams(query, params);
    const session = this.session(READ);
    try {
      const result = await session.executeRead(
        (tx) => tx.run(query.text, driverParams),
        this.txConfig(query.name),
      );
      return result.records.map(toRow);
    } catch (e) {
      throw mapDriverError(e, query.name);
    } finally {
      await session.close();
    }
  }

  /**
   * Streams a read query's rows in batches, awaiting `onBatch` (the driver pulls
   * the next rows only as they are consumed). One explicit transaction without
   * retries, since a retry would hand rows to `onBatch` twice; no time limit
   * (`timeoutMs` 0) unless one is given.
   */
  async stream(
    query: CypherQuery,
    params: Record<string, unknown>,
    batchSize: number,
    onBatch: (rows: Row[]) => void | Promise<void>,
    timeoutMs = 0,
  ): Promise<void> {
    const driverParams = toDriverParams(query, params);
    const session = this.session(READ);
    try {
      const tx = await session.beginTransaction(this.txConfig(query.name, timeoutMs));
      try {
        let batch: Row[] = [];
        for await (const record of tx.run(query.text, driverParams)) {
          batch.push(toRow(record));
          if (batch.length >= batchSize) {
            await onBatch(batch);
            batch = [];
          }
        }
        if (batch.length > 0) await onBatch(batch);
        await tx.commit();
      } finally {
        if (tx.isOpen()) await tx.rollback();
      }
    } catch (e) {
      throw mapDriverError(e, query.name);
    } finally {
      await session.close();
    }
  }

  /** Runs a write query in a managed transaction (retried on transient failures) and returns its rows. */
  async write(query: CypherQuery, params: Record<string, unknown> = {}, timeoutMs = 0): Promise<Row[]> {
    const driverParams = toDriverParams(query, params);
    const session = this.session(WRITE);
    try {
      const result = await session.executeWrite(
        (tx) => tx.run(query.text, driverParams),
        this.txConfig(query.name, timeoutMs),
      );
      return result.records.map(toRow);
    } catch (e) {
      throw mapDriverError(e, query.name);
    } finally {
      await session.close();
    }
  }

  /**
   * Runs a statement in an auto-commit transaction: schema statements, seed
   * scripts and `CALL (…) { … } IN TRANSACTIONS`, which Neo4j refuses inside an
   * explicit transaction. `name` labels it; values still travel as parameters.
   *
   * The driver runs an auto-commit statement a second time after some failures;
   * `once` turns that off for statements that must not run twice (a seed's CREATE
   * whose commit went through but whose reply was lost would write its nodes twice).
   */
  async autoCommit(
    name: string,
    text: string,
    params: Record<string, unknown> = {},
    { once = false }: { once?: boolean } = {},
  ): Promise<Row[]> {
    const session = this.session(WRITE, once ? { disableAutoCommitRetries: true } : {});
    try {
      const result = await session.run(text, params, this.txConfig(name, 0));
      return result.records.map(toRow);
    } catch (e) {
      throw mapDriverError(e, name);
    } finally {
      await session.close();
    }
  }
}

import { checkParams } from '../cypher-files';
import type { CypherQuery } from '../cypher-files';
export { QueryParameterError } from '../cypher-files';
import type {
  EngineConnection,
  EngineDatabase,
  EnginePreparedStatement,
  EngineQueryResult,
  EngineValue,
} from './engine';
import { newConnection } from './engine';

/**
 * A value no stored identifier can equal: the importer rejects control
 * characters, so an IN-list holding only this matches nothing.
 */
export const NO_MATCH_STRING = '\u0000';

/** A row as the engine returns it. */
export type EngineRow = Record<string, EngineValue>;

/**
 * Checks parameters against the query's header (see `checkParams`) and rewrites
 * the values the engine is known to crash the process on (seen with Kuzu 0.11.3):
 * - an empty list bound to `IN $ids`/`UNWIND $ids`: replaced by a list that matches nothing;
 * - `UNWIND $rows` over maps with differing keys: every map gets every key, missing ones null;
 * and `query` never binds a SKIP the engine crashes on (see `withoutSkip`).
 * Returns null when the query cannot produce rows (an empty MAP[] to UNWIND).
 */
export function normalizeParams(
  query: Pick<CypherQuery, 'name' | 'params'>,
  params: Record<string, unknown>,
): Record<string, EngineValue> | null {
  checkParams(query, params);
  const out: Record<string, EngineValue> = {};
  for (const [key, type] of query.params) {
    const value = params[key] as EngineValue;
    if (type === 'STRING[]' && Array.isArray(value) && value.length === 0) out[key] = [NO_MATCH_STRING];
    else if (type === 'MAP[]' && Array.isArray(value)) {
      if (value.length === 0) return null;
      out[key] = uniformMaps(value as Record<string, EngineValue>[]);
    } else out[key] = value;
  }
  return out;
}

/**
 * Kuzu 0.11.3 kills the process (SIGSEGV) on `ORDER BY ... SKIP n` once n passes a
 * few thousand (between 5,000 and 7,086 even on a table of two rows), well within
 * the offsets the API accepts; a large LIMIT is safe. A query declaring INT64
 * `$skip` and `$limit` therefore never gets a SKIP above 0: it reads skip + limit
 * rows and the caller's page is cut from them (the pages asked for are small, and
 * the rows before an offset are read by the engine either way).
 */
function withoutSkip(
  query: Pick<CypherQuery, 'params'>,
  params: Record<string, unknown>,
): { params: Record<string, unknown>; cut: number } {
  const { skip, limit } = params;
  if (query.params.get('skip') !== 'INT64' || query.params.get('limit') !== 'INT64')
    return { params, cut: 0 };
  if (typeof skip !== 'number' || typeof limit !== 'number' || skip <= 0) return { params, cut: 0 };
  return { params: { ...params, skip: 0, limit: skip + limit }, cut: skip };
}

function uniformMaps(rows: Record<string, EngineValue>[]): EngineValue {
  const keys = new Set<string>();
  for (const row of rows) for (const k of Object.keys(row)) keys.add(k);
  const ordered = [...keys].sort();
  return rows.map((row) => {
    const full: Record<string, EngineValue> = {};
    for (const k of ordered) full[k] = row[k] ?? null;
    return full;
  });
}

interface PooledConnection {
  conn: EngineConnection;
  statements: Map<string, EnginePreparedStatement>;
}

/**
 * A fixed set of initialised connections. A connection enters the pool only
 * after `init()` has resolved, runs one query at a time, and every result it
 * produces is closed in `finally`, so no result outlives its query.
 */
export class ConnectionPool {
  private readonly idle: PooledConnection[] = [];
  private readonly all: PooledConnection[] = [];
  private readonly waiters: ((c: PooledConnection) => void)[] = [];
  private inFlight = 0;
  /** Reads of several queries under way (see hold). */
  private held = 0;
  /** Set by close: queries are refused, but those of a read held (see hold). */
  private closing = false;
  /** Set by cut: close no longer waits for held reads, and their queries are refused too. */
  private holdsCut = false;
  /** Set once close has closed the connections: every query is refused. */
  private closed = false;
  private drained: (() => void) | null = null;

  private constructor(private readonly queryTimeoutMs: number) {}

  /** Opens `size` connections and waits for every one to be initialised. */
  static async open(
    db: EngineDatabase,
    size: number,
    options: { threadsPerQuery?: number; queryTimeoutMs: number },
  ): Promise<ConnectionPool> {
    const pool = new ConnectionPool(options.queryTimeoutMs);
    for (let i = 0; i < size; i++) {
      const conn = newConnection(db, options.threadsPerQuery);
      await conn.init();
      if (options.queryTimeoutMs > 0) conn.setQueryTimeout(options.queryTimeoutMs);
      const pooled = { conn, statements: new Map<string, EnginePreparedStatement>() };
      pool.all.push(pooled);
      pool.idle.push(pooled);
    }
    return pool;
  }

  get timeoutMs(): number {
    return this.queryTimeoutMs;
  }

  /** Runs a declared query and returns all its rows. */
  async query(query: CypherQuery, params: Record<string, unknown> = {}): Promise<EngineRow[]> {
    const paged = withoutSkip(query, params);
    const bound = normalizeParams(query, paged.params);
    if (bound === null) return [];
    const rows = await this.withConnection(async (pc) => {
      let stmt = query.bound ? undefined : pc.statements.get(query.name);
      if (!stmt) {
        stmt = await pc.conn.prepare(query.text);
        if (!stmt.isSuccess())
          throw new Error(`query ${query.name} does not compile: ${stmt.getErrorMessage()}`);
        if (!query.bound) pc.statements.set(query.name, stmt);
      }
      return collectRows(await pc.conn.execute(stmt, bound));
    });
    return paged.cut > 0 ? rows.slice(paged.cut) : rows;
  }

  /**
   * Runs one statement without parameters (schema, COPY, seed scripts). Values
   * must never be spliced into `text`: use `query` for anything with input.
   * `timeoutMs`: the statement's limit instead of the pool's, where the pool has one.
   */
  async run(text: string, options: { timeoutMs?: number } = {}): Promise<EngineRow[]> {
    const { timeoutMs } = options;
    return this.withConnection(async (pc) => {
      // Another limit for this statement alone (the engine keeps one a connection): an export
      // of every edge runs longer than any read should.
      if (timeoutMs === undefined || this.queryTimeoutMs <= 0) return collectRows(await pc.conn.query(text));
      pc.conn.setQueryTimeout(timeoutMs);
      try {
        return collectRows(await pc.conn.query(text));
      } finally {
        pc.conn.setQueryTimeout(this.queryTimeoutMs);
      }
    });
  }

  /** Streams the rows of a declared query in batches without holding them all. */
  async stream(
    query: CypherQuery,
    params: Record<string, unknown>,
    batchSize: number,
    onBatch: (rows: EngineRow[]) => void | Promise<void>,
  ): Promise<void> {
    const bound = normalizeParams(query, params);
    if (bound === null) return;
    await this.withConnection(async (pc) => {
      const stmt = await pc.conn.prepare(query.text);
      if (!stmt.isSuccess())
        throw new Error(`query ${query.name} does not compile: ${stmt.getErrorMessage()}`);
      const results = asList(await pc.conn.execute(stmt, bound));
      try {
        for (const result of results) {
          while (result.hasNext()) {
            const batch: EngineRow[] = [];
            // Sync reads are cheap per row; yielding between batches keeps the event loop live.
            while (batch.length < batchSize && result.hasNext()) {
              const row = result.getNextSync();
              if (row) batch.push(row);
            }
            // Awaited: a slow consumer slows the reader instead of letting batches pile up.
            await onBatch(batch);
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
        }
      } finally {
        for (const r of results) r.close();
      }
    });
  }

  /**
   * Runs `fn`, a read of several queries on this pool, and keeps the pool open until it ends: close
   * waits for it as for a query under way, and lets its queries through meanwhile. A store switching
   * to another generation closes the pool it served from, and would otherwise cut such a read off
   * between two of its queries.
   */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closing) throw new Error('graph store is closed');
    this.held++;
    try {
      return await fn();
    } finally {
      this.held--;
      this.settle();
    }
  }

  private async withConnection<T>(fn: (pc: PooledConnection) => Promise<T>): Promise<T> {
    if (this.closed || (this.closing && (this.held === 0 || this.holdsCut)))
      throw new Error('graph store is closed');
    const pc =
      this.idle.pop() ?? (await new Promise<PooledConnection>((resolve) => this.waiters.push(resolve)));
    this.inFlight++;
    try {
      return await fn(pc);
    } finally {
      this.inFlight--;
      const next = this.waiters.shift();
      if (next) next(pc);
      else this.idle.push(pc);
      this.settle();
    }
  }

  /** Lets close go on once no query runs and no read holds the pool. */
  private settle(): void {
    if (this.inFlight === 0 && (this.held === 0 || this.holdsCut) && this.drained) this.drained();
  }

  /**
   * Stops honouring held reads (the process is stopping): a close under way or to come waits only
   * for the queries running, and a held read's next query is refused. A read held in a sink that
   * never returns would otherwise hold the close for ever.
   */
  cut(): void {
    this.holdsCut = true;
    this.settle();
  }

  /** Waits for running queries and held reads, then closes every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.inFlight > 0 || (this.held > 0 && !this.holdsCut))
      await new Promise<void>((resolve) => (this.drained = resolve));
    this.closed = true;
    for (const pc of this.all) await pc.conn.close();
    this.all.length = 0;
    this.idle.length = 0;
  }
}

function asList(r: EngineQueryResult | EngineQueryResult[]): EngineQueryResult[] {
  return Array.isArray(r) ? r : [r];
}

/** Rows read between two yields to the event loop. */
const SYNC_ROWS_PER_TURN = 2_000;

/**
 * Reads every row with the engine's synchronous reader, yielding to the event
 * loop every few thousand rows. The asynchronous reader hands each row through
 * the thread pool: measured at ~29 µs a row against ~1.5 µs synchronously.
 */
async function collectRows(r: EngineQueryResult | EngineQueryResult[]): Promise<EngineRow[]> {
  const results = asList(r);
  try {
    const rows: EngineRow[] = [];
    let sinceYield = 0;
    for (const result of results) {
      while (result.hasNext()) {
        const row = result.getNextSync();
        if (row) rows.push(row);
        if (++sinceYield === SYNC_ROWS_PER_TURN) {
          sinceYield = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    }
    return rows;
  } finally {
    for (const result of results) result.close();
  }
}

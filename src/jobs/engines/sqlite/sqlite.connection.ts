import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';

/** How long a statement waits for another connection's write lock before failing with SQLITE_BUSY. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Where a SQLite-backed store gets its connection. */
export type SqliteConnectionOptions =
  /** A connection the caller opened and will close; the store never closes it. */
  | { db: Database }
  /** A file the store opens itself (WAL mode) and closes when it disconnects. */
  | { path: string; busyTimeoutMs?: number };

/**
 * Opens a SQLite file for stores that may share it with other connections or
 * processes: WAL lets readers proceed while one connection writes, and the busy
 * timeout makes a second writer wait for the lock instead of failing at once.
 * Pass the result as `{ db }` to several stores to keep them in one file.
 */
export function openSqliteFile(path: string, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS): Database {
  // The timeout is set by the constructor so that it already applies to the journal-mode switch below.
  const db = new BetterSqlite3(path, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  return db;
}

/**
 * The connection of a SQLite-backed store: either one the caller passed in (the
 * store never closes it) or a file the store opens on `open()` and closes on
 * `close()`, and can open again after that.
 */
export class SqliteConnection {
  /** Whether `close()` closes the connection (it was opened from a path). */
  readonly owned: boolean;
  private db: Database | undefined;
  private readonly path: string | undefined;
  private readonly busyTimeoutMs: number;

  /** `notOpen` is the error message of a call made while the connection is closed. */
  constructor(
    options: SqliteConnectionOptions,
    private readonly notOpen: string,
  ) {
    if ('db' in options) {
      this.db = options.db;
      this.owned = false;
      this.busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS;
    } else {
      this.path = options.path;
      this.owned = true;
      this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    }
  }

  /** The connection, opening the file first when it is the store's own and closed. */
  open(): Database {
    if (!this.db && this.path !== undefined) this.db = openSqliteFile(this.path, this.busyTimeoutMs);
    return this.get();
  }

  /** The open connection; throws when it is closed. */
  get(): Database {
    if (!this.db || !this.db.open) throw new Error(this.notOpen);
    return this.db;
  }

  /** Closes the connection if it is the store's own; a passed-in one stays open. */
  close(): void {
    if (this.owned && this.db) {
      this.db.close();
      this.db = undefined;
    }
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Rejects anything but a plain identifier: table names are spliced into SQL text. */
export function checkIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`invalid SQLite table name: ${JSON.stringify(name)}`);
  return name;
}

/**
 * Runs synchronous database work as a promise: a failure (SQLITE_BUSY, a closed
 * connection) becomes a rejection even for callers that do not await, such as
 * Agenda's fire-and-forget unlocks, instead of a throw inside Agenda's own code.
 */
export function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

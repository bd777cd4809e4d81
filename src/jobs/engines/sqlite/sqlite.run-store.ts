import type { Database } from 'better-sqlite3';
import { SqliteConnection, checkIdentifier, settle } from './sqlite.connection';
import type { SqliteConnectionOptions } from './sqlite.connection';
import type { TierViewRequest } from '../../../domain/tierview';
import {
  ENDED_STATES,
  RunKeyTaken,
  RunQuotaExceeded,
  applyRunPatch,
  fromRunDocument,
  meetsConditions,
  newRunRecord,
  toRunDocument,
} from '../../run-store';
import type {
  CreateOptions,
  LifeCycleState,
  RunDocument,
  RunPatch,
  RunRecord,
  RunStore,
  TransitionGuard,
} from '../../run-store';

/** Options of {@link SqliteRunStore}. */
export type SqliteRunStoreOptions = SqliteConnectionOptions & {
  /** Name of the runs table; its index is named after it. Default `runs`. */
  tableName?: string;
};

/** The owner as an expression over the document, so tables made before owners existed need no new column. */
const OWNER = `json_extract(document, '$.ownerKeyId')`;
const CALLBACK_DUE = `json_extract(document, '$.callbackDue')`;
const IDEMPOTENCY_KEY = `json_extract(document, '$.idempotencyKey')`;

const parseRecord = (document: string): RunRecord => fromRunDocument(JSON.parse(document) as RunDocument);

/**
 * Run records in a SQLite table, one JSON document per run. The life-cycle state
 * is also kept in its own column so queue positions and counts are index lookups.
 * Pass the same `{ db }` as the Agenda backend to keep jobs and runs in one file;
 * with `{ path }` the store opens the file in open() and closes it in close().
 */
export class SqliteRunStore implements RunStore {
  readonly name = 'sqlite';
  /** The runs table. */
  readonly tableName: string;
  private readonly conn: SqliteConnection;

  constructor(options: SqliteRunStoreOptions) {
    this.tableName = checkIdentifier(options.tableName ?? 'runs');
    this.conn = new SqliteConnection(options, `SQLite run store (${this.tableName}) is not open`);
  }

  /** Opens the file when the store owns it (again after a close) and creates the table if missing. */
  open(): Promise<void> {
    return settle(() => {
      const t = this.tableName;
      // AUTOINCREMENT: without it SQLite hands the id of a deleted newest row out again.
      this.conn.open().exec(`
        CREATE TABLE IF NOT EXISTS "${t}" (
          run_id INTEGER PRIMARY KEY AUTOINCREMENT,
          life_cycle_state TEXT NOT NULL,
          document TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS "${t}_state_idx" ON "${t}" (life_cycle_state, run_id);
        CREATE INDEX IF NOT EXISTS "${t}_owner_idx" ON "${t}" (${OWNER}, run_id);
        CREATE INDEX IF NOT EXISTS "${t}_callback_due_idx" ON "${t}" (run_id) WHERE ${CALLBACK_DUE} = 1;
        CREATE UNIQUE INDEX IF NOT EXISTS "${t}_idempotency_key_idx" ON "${t}" (${OWNER}, ${IDEMPOTENCY_KEY})
          WHERE ${IDEMPOTENCY_KEY} IS NOT NULL;
        CREATE TABLE IF NOT EXISTS "${t}_settings" (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
    });
  }

  /** Closes the connection if the store opened it; a passed-in connection stays open. */
  close(): Promise<void> {
    return settle(() => {
      this.conn.close();
    });
  }

  private connection(): Database {
    return this.conn.get();
  }

  create(request: TierViewRequest, now: Date, options: CreateOptions = {}): Promise<RunRecord> {
    return settle(() => {
      const db = this.connection();
      const t = this.tableName;
      const owner = options.ownerKeyId ?? null;
      const key = options.idempotencyKey ?? null;
      // The document holds its own id, which is only known after the insert: both writes in one
      // transaction, which also holds the write lock from the key's lookup and the quota count on.
      const stored = db
        .transaction((): string => {
          if (key !== null) {
            const taken = db
              .prepare<[string | null, string], { document: string }>(
                `SELECT document FROM "${t}" WHERE ${OWNER} IS ? AND ${IDEMPOTENCY_KEY} = ?`,
              )
              .get(owner, key);
            if (taken) throw new RunKeyTaken(parseRecord(taken.document));
          }
          if (options.maxActive !== undefined) {
            const active = db
              .prepare<[string | null], { n: number }>(
                `SELECT COUNT(*) AS n FROM "${t}"
                 WHERE ${OWNER} IS ? AND life_cycle_state IN ('PENDING', 'RUNNING')`,
              )
              .get(owner);
            if ((active?.n ?? 0) >= options.maxActive) throw new RunQuotaExceeded(options.maxActive);
          }
          const inserted = db
            .prepare(`INSERT INTO "${t}" (life_cycle_state, document) VALUES ('PENDING', '{}')`)
            .run();
          const runId = Number(inserted.lastInsertRowid);
          const document = JSON.stringify(toRunDocument(newRunRecord(runId, request, now, owner, key)));
          db.prepare(`UPDATE "${t}" SET document = ? WHERE run_id = ?`).run(document, runId);
          return document;
        })
        .immediate();
      // Parsed back from the stored text, so the caller sees exactly what get() will return.
      return parseRecord(stored);
    });
  }

  get(runId: number): Promise<RunRecord | null> {
    return settle(() => {
      const row = this.connection()
        .prepare<[number], { document: string }>(`SELECT document FROM "${this.tableName}" WHERE run_id = ?`)
        .get(runId);
      return row ? parseRecord(row.document) : null;
    });
  }

  /**
   * Reads, checks the state and writes inside one `BEGIN IMMEDIATE` transaction:
   * the write lock is held from the read on, so a racing transition (in this or
   * another process) sees the new state and fails its check.
   */
  transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
    guard?: TransitionGuard,
  ): Promise<RunRecord | null> {
    return settle(() => {
      const db = this.connection();
      const t = this.tableName;
      return db
        .transaction((): RunRecord | null => {
          const row = db
            .prepare<[number], { document: string }>(`SELECT document FROM "${t}" WHERE run_id = ?`)
            .get(runId);
          if (!row) return null;
          const current = parseRecord(row.document);
          if (!meetsConditions(current, from, guard)) return null;
          const updated = applyRunPatch(current, patch, now);
          db.prepare(`UPDATE "${t}" SET life_cycle_state = ?, document = ? WHERE run_id = ?`).run(
            updated.lifeCycleState,
            JSON.stringify(toRunDocument(updated)),
            runId,
          );
          return updated;
        })
        .immediate();
    });
  }

  listByOwner(ownerKeyId: string, limit: number, offset: number): Promise<RunRecord[]> {
    return settle(() =>
      this.connection()
        .prepare<[string, number, number], { document: string }>(
          `SELECT document FROM "${this.tableName}" WHERE ${OWNER} = ? ORDER BY run_id DESC LIMIT ? OFFSET ?`,
        )
        .all(ownerKeyId, limit, offset)
        .map((r) => parseRecord(r.document)),
    );
  }

  /** Ids grow with creation time, so "created before" is "smaller id". */
  countPendingBefore(runId: number): Promise<number> {
    return settle(() => {
      const row = this.connection()
        .prepare<[number], { n: number }>(
          `SELECT COUNT(*) AS n FROM "${this.tableName}" WHERE life_cycle_state = 'PENDING' AND run_id < ?`,
        )
        .get(runId);
      return row?.n ?? 0;
    });
  }

  countInState(state: LifeCycleState): Promise<number> {
    return settle(() => {
      const row = this.connection()
        .prepare<[string], { n: number }>(
          `SELECT COUNT(*) AS n FROM "${this.tableName}" WHERE life_cycle_state = ?`,
        )
        .get(state);
      return row?.n ?? 0;
    });
  }

  runIdKey(candidate: string): Promise<string> {
    return settle(() => {
      const db = this.connection();
      const t = this.tableName;
      db.prepare(`INSERT OR IGNORE INTO "${t}_settings" (name, value) VALUES ('run_id_key', ?)`).run(
        candidate,
      );
      const row = db
        .prepare<[], { value: string }>(`SELECT value FROM "${t}_settings" WHERE name = 'run_id_key'`)
        .get();
      if (!row) throw new Error(`the run id key is missing from "${t}_settings"`);
      return row.value;
    });
  }

  listCallbacksDue(changedBefore: Date, limit: number): Promise<RunRecord[]> {
    return settle(() =>
      this.connection()
        .prepare<[string, number], { document: string }>(
          // Dates are stored as ISO text of one fixed width, so text order is time order.
          `SELECT document FROM "${this.tableName}"
           WHERE ${CALLBACK_DUE} = 1 AND life_cycle_state IN (${ENDED_STATES.map((s) => `'${s}'`).join(', ')})
             AND json_extract(document, '$.updatedAt') < ?
           ORDER BY run_id LIMIT ?`,
        )
        .all(changedBefore.toISOString(), limit)
        .map((r) => parseRecord(r.document)),
    );
  }
}

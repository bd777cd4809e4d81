import { Pool } from 'pg';
import type { PoolClient } from 'pg';
import type { TierViewRequest } from '../../../domain/tierview';
import {
  ENDED_STATES,
  RunKeyTaken,
  LIFE_CYCLE_STATES,
  RESULT_STATES,
  RunQuotaExceeded,
  newRunRecord,
} from '../../run-store';
import type {
  CreateOptions,
  LifeCycleState,
  ResultState,
  RunPatch,
  RunRecord,
  RunStore,
  TransitionGuard,
} from '../../run-store';

/** Where the store connects: a pool the caller owns (and closes), or a URL it opens itself. */
export type PostgresRunStoreOptions = ({ pool: Pool } | { connectionString: string }) & {
  /** Table of run records, created on open when missing (default `tiergraph_runs`). */
  tableName?: string;
};

interface RunRow {
  run_id: string;
  request: TierViewRequest;
  owner_key_id: string | null;
  /** Absent from rows of a table read before open() added the column. */
  idempotency_key?: string | null;
  life_cycle_state: LifeCycleState;
  result_state: ResultState | null;
  state_message: string;
  user_cancelled_or_timedout: boolean;
  cancel_requested: boolean;
  files: Record<string, string> | null;
  attempts: number;
  attempt_id: string | null;
  heartbeat_at: Date | null;
  callback_due: boolean;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  updated_at: Date;
}

/** Column of each patchable field; jsonb columns are sent as JSON text. */
const PATCH_COLUMNS: { [K in keyof Required<RunPatch>]: { column: string; json?: true } } = {
  lifeCycleState: { column: 'life_cycle_state' },
  resultState: { column: 'result_state' },
  stateMessage: { column: 'state_message' },
  userCancelledOrTimedout: { column: 'user_cancelled_or_timedout' },
  cancelRequested: { column: 'cancel_requested' },
  files: { column: 'files', json: true },
  attempts: { column: 'attempts' },
  attemptId: { column: 'attempt_id' },
  heartbeatAt: { column: 'heartbeat_at' },
  callbackDue: { column: 'callback_due' },
  startedAt: { column: 'started_at' },
  endedAt: { column: 'ended_at' },
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

function fromRow(row: RunRow): RunRecord {
  return {
    // bigint arrives as text; ids stay far below 2^53.
    runId: Number(row.run_id),
    request: row.request,
    ownerKeyId: row.owner_key_id,
    idempotencyKey: row.idempotency_key ?? null,
    lifeCycleState: row.life_cycle_state,
    resultState: row.result_state,
    stateMessage: row.state_message,
    userCancelledOrTimedout: row.user_cancelled_or_timedout,
    cancelRequested: row.cancel_requested,
    files: row.files,
    attempts: row.attempts,
    attemptId: row.attempt_id,
    heartbeatAt: row.heartbeat_at,
    callbackDue: row.callback_due,
    createdAt: row.created_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Run records in one PostgreSQL table, next to Agenda's jobs table when
 * `JOBS_BACKEND=postgres`. Ids come from an identity column, whose sequence never
 * hands out a value twice (not after a rollback, a delete or a restart), and every
 * transition is a single conditional UPDATE, so two workers racing for the same
 * run cannot both win.
 */
export class PostgresRunStore implements RunStore {
  readonly name = 'postgres';
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly table: string;
  private readonly tableName: string;

  constructor(options: PostgresRunStoreOptions) {
    this.tableName = options.tableName ?? 'tiergraph_runs';
    // The name is spliced into SQL, so only plain identifiers are accepted.
    if (!IDENTIFIER.test(this.tableName)) throw new Error(`invalid run table name: ${this.tableName}`);
    this.table = `"${this.tableName}"`;
    if ('pool' in options) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      this.pool = new Pool({ connectionString: options.connectionString });
      // The pool drops an idle connection that the server closed and opens another on
      // the next query; unhandled, that 'error' event would end the process.
      this.pool.on('error', () => undefined);
      this.ownsPool = true;
    }
  }

  async open(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Two processes opening at once would both pass IF NOT EXISTS and one would then
      // fail on the catalog's unique index; the lock makes the second one wait instead.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `tiergraph-run-store:${this.tableName}`,
      ]);
      await this.createSchema(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async createSchema(client: PoolClient): Promise<void> {
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${this.table} (
        run_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        request jsonb NOT NULL,
        life_cycle_state text NOT NULL CHECK (life_cycle_state IN (${sqlList(LIFE_CYCLE_STATES)})),
        result_state text CHECK (result_state IN (${sqlList(RESULT_STATES)})),
        state_message text NOT NULL DEFAULT '',
        user_cancelled_or_timedout boolean NOT NULL DEFAULT false,
        cancel_requested boolean NOT NULL DEFAULT false,
        files jsonb,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        started_at timestamptz,
        ended_at timestamptz,
        updated_at timestamptz NOT NULL
      )`);
    // Columns added after the first release: tables made before them gain them here.
    await client.query(`
      ALTER TABLE ${this.table}
        ADD COLUMN IF NOT EXISTS owner_key_id text,
        ADD COLUMN IF NOT EXISTS attempt_id text,
        ADD COLUMN IF NOT EXISTS heartbeat_at timestamptz,
        ADD COLUMN IF NOT EXISTS callback_due boolean NOT NULL DEFAULT false,
        ADD COLUMN IF NOT EXISTS idempotency_key text`);
    // Serves both counts: runs in a state, and PENDING runs below an id.
    await client.query(
      `CREATE INDEX IF NOT EXISTS "${this.tableName}_state_idx" ON ${this.table} (life_cycle_state, run_id)`,
    );
    await client.query(
      `CREATE INDEX IF NOT EXISTS "${this.tableName}_owner_idx" ON ${this.table} (owner_key_id, run_id)`,
    );
    await client.query(
      `CREATE INDEX IF NOT EXISTS "${this.tableName}_callback_due_idx" ON ${this.table} (run_id) WHERE callback_due`,
    );
    await client.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS "${this.tableName}_idempotency_key_idx"
         ON ${this.table} (owner_key_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${this.settings} (name text PRIMARY KEY, value text NOT NULL)`,
    );
  }

  /** The table of the store's settings (the run id key), beside the runs. */
  private get settings(): string {
    return `"${this.tableName}_settings"`;
  }

  async runIdKey(candidate: string): Promise<string> {
    await this.pool.query(
      `INSERT INTO ${this.settings} (name, value) VALUES ('run_id_key', $1) ON CONFLICT (name) DO NOTHING`,
      [candidate],
    );
    const { rows } = await this.pool.query<{ value: string }>(
      `SELECT value FROM ${this.settings} WHERE name = 'run_id_key'`,
    );
    if (!rows[0]) throw new Error(`the run id key is missing from ${this.settings}`);
    return rows[0].value;
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  async create(request: TierViewRequest, now: Date, options: CreateOptions = {}): Promise<RunRecord> {
    const r = newRunRecord(0, request, now, options.ownerKeyId ?? null, options.idempotencyKey ?? null);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (options.maxActive !== undefined || r.idempotencyKey !== null) {
        // Two creates of one owner would both count below the quota (or both miss the key) and both
        // insert; a lock per owner, held to the commit, makes the second look after the first insert.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `tiergraph-run-quota:${this.tableName}:${r.ownerKeyId ?? ''}`,
        ]);
      }
      if (r.idempotencyKey !== null) {
        // Equality (or IS NULL) rather than IS NOT DISTINCT FROM, which no index serves.
        const { rows } =
          r.ownerKeyId === null
            ? await client.query<RunRow>(
                `SELECT * FROM ${this.table} WHERE owner_key_id IS NULL AND idempotency_key = $1`,
                [r.idempotencyKey],
              )
            : await client.query<RunRow>(
                `SELECT * FROM ${this.table} WHERE owner_key_id = $1 AND idempotency_key = $2`,
                [r.ownerKeyId, r.idempotencyKey],
              );
        if (rows[0]) throw new RunKeyTaken(fromRow(rows[0]));
      }
      if (options.maxActive !== undefined) {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${this.table}
           WHERE owner_key_id IS NOT DISTINCT FROM $1 AND life_cycle_state IN ('PENDING', 'RUNNING')`,
          [r.ownerKeyId],
        );
        if (rows[0]!.n >= options.maxActive) {
          throw new RunQuotaExceeded(options.maxActive);
        }
      }
      const { rows } = await client.query<RunRow>(
        `INSERT INTO ${this.table}
           (request, owner_key_id, life_cycle_state, result_state, state_message, user_cancelled_or_timedout,
            cancel_requested, files, attempts, attempt_id, heartbeat_at, created_at, started_at, ended_at,
            updated_at, idempotency_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
         RETURNING *`,
        [
          JSON.stringify(r.request),
          r.ownerKeyId,
          r.lifeCycleState,
          r.resultState,
          r.stateMessage,
          r.userCancelledOrTimedout,
          r.cancelRequested,
          r.files === null ? null : JSON.stringify(r.files),
          r.attempts,
          r.attemptId,
          r.heartbeatAt,
          r.createdAt,
          r.startedAt,
          r.endedAt,
          r.updatedAt,
          r.idempotencyKey,
        ],
      );
      await client.query('COMMIT');
      return fromRow(rows[0]!);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async get(runId: number): Promise<RunRecord | null> {
    const { rows } = await this.pool.query<RunRow>(`SELECT * FROM ${this.table} WHERE run_id = $1`, [runId]);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
    guard?: TransitionGuard,
  ): Promise<RunRecord | null> {
    const sets = ['updated_at = $3'];
    const params: unknown[] = [runId, [...from], now];
    for (const [key, value] of Object.entries(patch) as [keyof RunPatch, unknown][]) {
      // Same rule as applyRunPatch: an undefined field leaves the column as it is.
      if (value === undefined) continue;
      const { column, json } = PATCH_COLUMNS[key];
      params.push(json && value !== null ? JSON.stringify(value) : value);
      sets.push(`${column} = $${params.length}`);
    }
    let attemptCheck = '';
    if (guard) {
      params.push(guard.attemptId);
      attemptCheck = ` AND attempt_id IS NOT DISTINCT FROM $${params.length}`;
      if (guard.uncanceled) attemptCheck += ' AND cancel_requested = false';
    }
    // The state check and the write are one statement: under READ COMMITTED a racing
    // UPDATE waits for the row lock, then re-evaluates the WHERE against the new row
    // and matches nothing, so only one transition from a given state succeeds.
    const { rows } = await this.pool.query<RunRow>(
      `UPDATE ${this.table} SET ${sets.join(', ')}
       WHERE run_id = $1 AND life_cycle_state = ANY($2::text[])${attemptCheck}
       RETURNING *`,
      params,
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }

  async listByOwner(ownerKeyId: string, limit: number, offset: number): Promise<RunRecord[]> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT * FROM ${this.table} WHERE owner_key_id = $1 ORDER BY run_id DESC LIMIT $2 OFFSET $3`,
      [ownerKeyId, limit, offset],
    );
    return rows.map(fromRow);
  }

  async countPendingBefore(runId: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.table} WHERE life_cycle_state = 'PENDING' AND run_id < $1`,
      [runId],
    );
    return rows[0]!.n;
  }

  async countInState(state: LifeCycleState): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.table} WHERE life_cycle_state = $1`,
      [state],
    );
    return rows[0]!.n;
  }

  async listCallbacksDue(changedBefore: Date, limit: number): Promise<RunRecord[]> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT * FROM ${this.table}
       WHERE callback_due AND life_cycle_state IN (${sqlList(ENDED_STATES)}) AND updated_at < $1
       ORDER BY run_id LIMIT $2`,
      [changedBefore, limit],
    );
    return rows.map(fromRow);
  }
}

import { randomUUID } from 'node:crypto';
import type { Database, RunResult, Statement } from 'better-sqlite3';
import { computeJobState, toJobId } from 'agenda';
import { SqliteConnection, checkIdentifier, settle } from './sqlite.connection';
import type { SqliteConnectionOptions } from './sqlite.connection';
import type {
  AgendaBackend,
  JobId,
  JobParameters,
  JobRepository,
  JobRepositoryOptions,
  JobsOverview,
  JobsQueryOptions,
  JobsResult,
  JobsSort,
  JobWithState,
  RemoveJobsOptions,
  SortDirection,
} from 'agenda';

/** Options of {@link SqliteJobBackend}. */
export type SqliteJobBackendOptions = SqliteConnectionOptions & {
  /** Name of the jobs table; its indexes are named after it. Default `agenda_jobs`. */
  tableName?: string;
};

interface JobRow {
  id: string;
  name: string;
  priority: number;
  next_run_at: number | null;
  type: 'normal' | 'single';
  locked_at: number | null;
  last_finished_at: number | null;
  failed_at: number | null;
  fail_count: number | null;
  fail_reason: string | null;
  repeat_timezone: string | null;
  last_run_at: number | null;
  repeat_interval: string | number | null;
  data: string | null;
  repeat_at: string | null;
  disabled: number;
  progress: number | null;
  fork: number;
  last_modified_by: string | null;
  debounce_started_at: number | null;
  start_date: number | null;
  end_date: number | null;
  skip_days: string | null;
  unique_key: string | null;
}

type StoredJob = JobParameters & { _id: JobId };

/** A WHERE fragment with its positional parameters. */
interface Where {
  sql: string[];
  params: unknown[];
}

// Epoch milliseconds keep every date column an INTEGER, so comparisons and ORDER BY are numeric.
// Callers occasionally hand over ISO strings where the types promise a Date, hence `new Date(...)`.
const ms = (d: Date | string | number | null | undefined): number | null =>
  d === null || d === undefined ? null : new Date(d).getTime();
const dateOf = (v: number | null): Date | undefined => (v === null ? undefined : new Date(v));
const parseJson = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));
const jsonText = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

function rowToJob(row: JobRow): StoredJob {
  return {
    _id: toJobId(row.id),
    name: row.name,
    priority: row.priority,
    nextRunAt: dateOf(row.next_run_at) ?? null,
    type: row.type,
    lockedAt: dateOf(row.locked_at),
    lastFinishedAt: dateOf(row.last_finished_at),
    failedAt: dateOf(row.failed_at),
    failCount: row.fail_count ?? undefined,
    failReason: row.fail_reason ?? undefined,
    repeatTimezone: row.repeat_timezone ?? undefined,
    lastRunAt: dateOf(row.last_run_at),
    repeatInterval: row.repeat_interval ?? undefined,
    data: parseJson(row.data),
    repeatAt: row.repeat_at ?? undefined,
    disabled: row.disabled === 1,
    progress: row.progress ?? undefined,
    fork: row.fork === 1,
    lastModifiedBy: row.last_modified_by ?? undefined,
    debounceStartedAt: dateOf(row.debounce_started_at),
    startDate: dateOf(row.start_date),
    endDate: dateOf(row.end_date),
    skipDays: row.skip_days === null ? undefined : (JSON.parse(row.skip_days) as number[]),
    unique: row.unique_key === null ? undefined : (JSON.parse(row.unique_key) as Record<string, unknown>),
  };
}

/**
 * The columns a save writes: what the job is and when it runs next, never the
 * processing state (lock, last run, failures), which belongs to the worker.
 */
function describeJob(job: JobParameters, lastModifiedBy: string | null) {
  return {
    name: job.name,
    priority: job.priority ?? 0,
    next_run_at: ms(job.nextRunAt),
    type: job.type ?? 'normal',
    repeat_timezone: job.repeatTimezone || null,
    repeat_interval: job.repeatInterval || null,
    data: jsonText(job.data),
    repeat_at: job.repeatAt || null,
    disabled: job.disabled ? 1 : 0,
    fork: job.fork ? 1 : 0,
    last_modified_by: lastModifiedBy,
    start_date: ms(job.startDate),
    end_date: ms(job.endDate),
    skip_days: job.skipDays ? JSON.stringify(job.skipDays) : null,
    unique_key: job.unique ? JSON.stringify(job.unique) : null,
  };
}

// Derived from describeJob so the column lists in the SQL and the bound values cannot drift apart.
const DESCRIBED_COLUMNS = Object.keys(
  describeJob({ name: '', priority: 0, nextRunAt: null, type: 'normal', data: null }, null),
);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A JSON path that addresses each segment as an object key, whatever characters it holds. */
function jsonPath(segments: string[]): string {
  return (
    '$' +
    segments
      .map((s) => {
        if (s.includes('"')) throw new Error(`unsupported data key: ${JSON.stringify(s)}`);
        return `."${s}"`;
      })
      .join('')
  );
}

/**
 * Equality on a value inside `data`. `->` yields the JSON text of the member, so
 * types are kept apart (1, "1" and true differ) as a document store would; null
 * matches an explicit null and a missing member alike.
 */
function dataEquals(where: Where, segments: string[], value: unknown): void {
  const path = jsonPath(segments);
  if (value === null) {
    where.sql.push(`(data -> ? IS NULL OR data -> ? = 'null')`);
    where.params.push(path, path);
  } else {
    where.sql.push('data -> ? = ?');
    where.params.push(path, JSON.stringify(value));
  }
}

/**
 * A data filter matches field by field: nested plain objects are walked and each
 * leaf compared for equality, so `{ a: { b: 1 } }` matches any data whose `a.b`
 * is 1. Anything else (array, string, number) must equal the whole of `data`.
 */
function addDataFilter(where: Where, data: unknown, prefix: string[] = []): void {
  if (!isPlainObject(data)) {
    if (prefix.length === 0) {
      where.sql.push('data IS ?');
      where.params.push(jsonText(data));
    } else {
      dataEquals(where, prefix, data);
    }
    return;
  }
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    if (isPlainObject(value)) addDataFilter(where, value, [...prefix, key]);
    else dataEquals(where, [...prefix, key], value);
  }
}

/** Fields a `unique` key may name besides `data.*`, with how their values are stored. */
const UNIQUE_COLUMNS: Record<string, { column: string; kind: 'plain' | 'date' | 'boolean' | 'json' }> = {
  _id: { column: 'id', kind: 'plain' },
  name: { column: 'name', kind: 'plain' },
  priority: { column: 'priority', kind: 'plain' },
  nextRunAt: { column: 'next_run_at', kind: 'date' },
  type: { column: 'type', kind: 'plain' },
  lockedAt: { column: 'locked_at', kind: 'date' },
  lastFinishedAt: { column: 'last_finished_at', kind: 'date' },
  failedAt: { column: 'failed_at', kind: 'date' },
  failCount: { column: 'fail_count', kind: 'plain' },
  failReason: { column: 'fail_reason', kind: 'plain' },
  repeatTimezone: { column: 'repeat_timezone', kind: 'plain' },
  lastRunAt: { column: 'last_run_at', kind: 'date' },
  repeatInterval: { column: 'repeat_interval', kind: 'plain' },
  repeatAt: { column: 'repeat_at', kind: 'plain' },
  disabled: { column: 'disabled', kind: 'boolean' },
  progress: { column: 'progress', kind: 'plain' },
  fork: { column: 'fork', kind: 'boolean' },
  lastModifiedBy: { column: 'last_modified_by', kind: 'plain' },
  debounceStartedAt: { column: 'debounce_started_at', kind: 'date' },
  startDate: { column: 'start_date', kind: 'date' },
  endDate: { column: 'end_date', kind: 'date' },
  skipDays: { column: 'skip_days', kind: 'json' },
};

/**
 * Translates a `unique` key (`{ 'data.userId': 7 }`, `{ name: 'x' }`) into equality
 * conditions. Keys are looked up in a fixed list rather than spliced into SQL, so
 * a caller-supplied key cannot inject anything; values are always bound.
 */
function uniqueWhere(unique: Record<string, unknown>): Where {
  const where: Where = { sql: [], params: [] };
  for (const [key, value] of Object.entries(unique)) {
    if (key === 'data') {
      where.sql.push('data IS ?');
      where.params.push(jsonText(value));
      continue;
    }
    if (key.startsWith('data.')) {
      dataEquals(where, key.slice('data.'.length).split('.'), value);
      continue;
    }
    const field = UNIQUE_COLUMNS[key];
    if (!field) throw new Error(`unsupported field in unique key: ${JSON.stringify(key)}`);
    let bound: unknown;
    if (value === null || value === undefined) bound = null;
    else if (field.kind === 'date') bound = ms(value as Date);
    else if (field.kind === 'boolean') bound = value ? 1 : 0;
    else if (field.kind === 'json') bound = JSON.stringify(value);
    else if (typeof value === 'string' || typeof value === 'number') bound = value;
    else throw new Error(`unsupported value for unique field ${key}: ${JSON.stringify(value)}`);
    where.sql.push(`${field.column} IS ?`);
    where.params.push(bound);
  }
  return where;
}

// `data` is left out: an order over JSON text would look meaningful without being so.
const SORT_COLUMNS: Record<Exclude<keyof JobsSort, 'data'>, { column: string; nullable: boolean }> = {
  nextRunAt: { column: 'next_run_at', nullable: true },
  lastRunAt: { column: 'last_run_at', nullable: true },
  lastFinishedAt: { column: 'last_finished_at', nullable: true },
  priority: { column: 'priority', nullable: false },
  name: { column: 'name', nullable: false },
};

const sqlDirection = (d: SortDirection): string => (d === 'asc' ? 'ASC' : 'DESC');

/** ORDER BY for listings; unset timestamps go last either way, as on the other SQL backend. */
function orderBy(sort: JobsSort | undefined): string {
  const parts: string[] = [];
  for (const [key, field] of Object.entries(SORT_COLUMNS)) {
    const dir = sort?.[key as keyof typeof SORT_COLUMNS];
    if (dir === undefined) continue;
    parts.push(`${field.column} ${sqlDirection(dir)}${field.nullable ? ' NULLS LAST' : ''}`);
  }
  // The id makes pages stable when the sort keys tie.
  return parts.length > 0
    ? `${parts.join(', ')}, id`
    : 'next_run_at DESC NULLS LAST, last_run_at DESC NULLS LAST, id';
}

/** Which jobs a remove/disable/enable targets; null when the options select nothing. */
function selectionWhere(options: RemoveJobsOptions): Where | null {
  const where: Where = { sql: [], params: [] };
  if (options.id) {
    where.sql.push('id = ?');
    where.params.push(String(options.id));
  } else if (options.ids && options.ids.length > 0) {
    where.sql.push('id IN (SELECT value FROM json_each(?))');
    where.params.push(JSON.stringify(options.ids.map(String)));
  }
  if (options.name) {
    where.sql.push('name = ?');
    where.params.push(options.name);
  } else if (options.names && options.names.length > 0) {
    where.sql.push('name IN (SELECT value FROM json_each(?))');
    where.params.push(JSON.stringify(options.names));
  } else if (options.notNames && options.notNames.length > 0) {
    where.sql.push('name NOT IN (SELECT value FROM json_each(?))');
    where.params.push(JSON.stringify(options.notNames));
  }
  if (options.data !== undefined) addDataFilter(where, options.data);
  // Without any condition the statement would hit every job: a missing filter must not mean "all".
  return where.sql.length > 0 ? where : null;
}

const MAX_CACHED_STATEMENTS = 200;

const whereClause = (where: Where): string =>
  where.sql.length > 0 ? `WHERE ${where.sql.join(' AND ')}` : '';

/**
 * Agenda's job storage in a SQLite table. Every method runs synchronously on the
 * connection, so each one is atomic within the process; the read-then-write ones
 * (picking the next job, upserts) also run in `BEGIN IMMEDIATE` transactions,
 * which take the file's write lock up front, so several processes sharing the
 * file never lock the same job twice.
 */
export class SqliteJobRepository implements JobRepository {
  /** The jobs table. */
  readonly tableName: string;
  /** Whether {@link disconnect} closes the connection (it was opened from a path). */
  readonly ownsConnection: boolean;
  private readonly conn: SqliteConnection;
  private readonly statements = new Map<string, Statement<unknown[]>>();

  constructor(options: SqliteJobBackendOptions) {
    this.tableName = checkIdentifier(options.tableName ?? 'agenda_jobs');
    this.conn = new SqliteConnection(options, `SQLite job repository (${this.tableName}) is not connected`);
    this.ownsConnection = this.conn.owned;
  }

  /** Opens the file when the repository owns it (again after a disconnect) and creates the table if missing. */
  connect(): Promise<void> {
    return settle(() => {
      const db = this.conn.open();
      const t = this.tableName;
      db.exec(`
        CREATE TABLE IF NOT EXISTS "${t}" (
          id TEXT PRIMARY KEY NOT NULL,
          name TEXT NOT NULL,
          priority INTEGER NOT NULL DEFAULT 0,
          next_run_at INTEGER,
          type TEXT NOT NULL DEFAULT 'normal' CHECK (type IN ('normal', 'single')),
          locked_at INTEGER,
          last_finished_at INTEGER,
          failed_at INTEGER,
          fail_count INTEGER,
          fail_reason TEXT,
          repeat_timezone TEXT,
          last_run_at INTEGER,
          -- no declared type: a number (ms) must come back a number and a text ('5 minutes') text
          repeat_interval,
          data TEXT,
          repeat_at TEXT,
          disabled INTEGER NOT NULL DEFAULT 0,
          progress REAL,
          fork INTEGER NOT NULL DEFAULT 0,
          last_modified_by TEXT,
          debounce_started_at INTEGER,
          start_date INTEGER,
          end_date INTEGER,
          skip_days TEXT,
          unique_key TEXT
        );
        CREATE INDEX IF NOT EXISTS "${t}_next_job_idx" ON "${t}" (name, locked_at, next_run_at);
        CREATE UNIQUE INDEX IF NOT EXISTS "${t}_single_idx" ON "${t}" (name) WHERE type = 'single';
        CREATE INDEX IF NOT EXISTS "${t}_next_run_at_idx" ON "${t}" (next_run_at) WHERE next_run_at IS NOT NULL;
      `);
    });
  }

  /** Closes the connection if the repository opened it; a passed-in connection stays open. */
  disconnect(): Promise<void> {
    return settle(() => {
      this.statements.clear();
      this.conn.close();
    });
  }

  private connection(): Database {
    return this.conn.get();
  }

  private statement(sql: string): Statement<unknown[]> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      // Filters yield one query text per combination of options; start over rather than grow without bound.
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      stmt = this.connection().prepare<unknown[]>(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private all<R>(sql: string, ...params: unknown[]): R[] {
    return this.statement(sql).all(...params) as R[];
  }

  private one<R>(sql: string, ...params: unknown[]): R | undefined {
    return this.statement(sql).get(...params) as R | undefined;
  }

  /** A write with RETURNING that must hit a row (an insert, or an update by an id read in the same transaction). */
  private returning(sql: string, params: Record<string, unknown>): JobRow {
    const row = this.one<JobRow>(sql, params);
    if (!row) throw new Error(`SQLite job repository (${this.tableName}): write returned no row`);
    return row;
  }

  private run(sql: string, ...params: unknown[]): RunResult {
    return this.statement(sql).run(...params);
  }

  private immediate<T>(fn: () => T): T {
    return this.connection().transaction(fn).immediate();
  }

  getJobById(id: string): Promise<JobParameters | null> {
    return settle(() => {
      const row = this.one<JobRow>(`SELECT * FROM "${this.tableName}" WHERE id = ?`, String(id));
      return row ? rowToJob(row) : null;
    });
  }

  /**
   * Lists jobs with their computed state. The state is derived from several
   * timestamps by Agenda's own rule, so a state filter is applied after reading
   * and pagination follows it; without one, paging happens in SQL.
   */
  queryJobs(options: JobsQueryOptions = {}): Promise<JobsResult> {
    return settle(() => {
      const {
        name,
        names,
        state,
        id,
        ids,
        search,
        data,
        includeDisabled = true,
        sort,
        skip = 0,
        limit = 0,
      } = options;
      const now = new Date();
      const where: Where = { sql: [], params: [] };
      if (name) {
        where.sql.push('name = ?');
        where.params.push(name);
      } else if (names && names.length > 0) {
        where.sql.push('name IN (SELECT value FROM json_each(?))');
        where.params.push(JSON.stringify(names));
      }
      if (id) {
        where.sql.push('id = ?');
        where.params.push(String(id));
      } else if (ids && ids.length > 0) {
        where.sql.push('id IN (SELECT value FROM json_each(?))');
        where.params.push(JSON.stringify(ids.map(String)));
      }
      if (search) {
        // instr keeps the search text literal (no LIKE wildcards); lower() folds ASCII case.
        where.sql.push('instr(lower(name), lower(?)) > 0');
        where.params.push(search);
      }
      if (data !== undefined) addDataFilter(where, data);
      if (!includeDisabled) where.sql.push('disabled = 0');
      const base = `FROM "${this.tableName}" ${whereClause(where)}`;
      const withState = (row: JobRow): JobWithState => {
        const job = rowToJob(row);
        return { ...job, state: computeJobState(job, now) };
      };

      // One read transaction so the count and the page come from the same snapshot.
      return this.connection().transaction((): JobsResult => {
        if (!state) {
          const total = this.one<{ n: number }>(`SELECT COUNT(*) AS n ${base}`, ...where.params)?.n ?? 0;
          // LIMIT -1 is SQLite's "no limit", for a skip without a page size.
          const rows = this.all<JobRow>(
            `SELECT * ${base} ORDER BY ${orderBy(sort)} LIMIT ? OFFSET ?`,
            ...where.params,
            limit > 0 ? limit : -1,
            Math.max(0, skip),
          );
          return { jobs: rows.map(withState), total };
        }
        const matching = this.all<JobRow>(`SELECT * ${base} ORDER BY ${orderBy(sort)}`, ...where.params)
          .map(withState)
          // 'paused' comes from the disabled flag, which computeJobState does not look at.
          .filter((job) => (state === 'paused' ? job.disabled === true : job.state === state));
        const end = limit > 0 ? Math.max(0, skip) + limit : undefined;
        return { jobs: matching.slice(Math.max(0, skip), end), total: matching.length };
      })();
    });
  }

  /** Per job name: the total and how many jobs are in each state; disabled jobs count as paused as well. */
  getJobsOverview(): Promise<JobsOverview[]> {
    return settle(() => {
      const now = new Date();
      const byName = new Map<string, JobsOverview>();
      for (const row of this.all<JobRow>(`SELECT * FROM "${this.tableName}" ORDER BY name`)) {
        let overview = byName.get(row.name);
        if (!overview) {
          overview = {
            name: row.name,
            total: 0,
            running: 0,
            scheduled: 0,
            queued: 0,
            completed: 0,
            failed: 0,
            repeating: 0,
            paused: 0,
          };
          byName.set(row.name, overview);
        }
        const job = rowToJob(row);
        overview.total++;
        overview[computeJobState(job, now)]++;
        if (job.disabled) overview.paused++;
      }
      return [...byName.values()];
    });
  }

  getDistinctJobNames(): Promise<string[]> {
    return settle(() => {
      const rows = this.all<{ name: string }>(`SELECT DISTINCT name FROM "${this.tableName}" ORDER BY name`);
      return rows.map((r) => r.name);
    });
  }

  /** Jobs whose run time has passed, locked or not. */
  getQueueSize(): Promise<number> {
    return settle(() => {
      const row = this.one<{ n: number }>(
        `SELECT COUNT(*) AS n FROM "${this.tableName}" WHERE next_run_at < ?`,
        Date.now(),
      );
      return row?.n ?? 0;
    });
  }

  /** Deletes the selected jobs; options that select nothing delete nothing. */
  removeJobs(options: RemoveJobsOptions): Promise<number> {
    return settle(() => {
      const where = selectionWhere(options);
      if (!where) return 0;
      return this.run(`DELETE FROM "${this.tableName}" ${whereClause(where)}`, ...where.params).changes;
    });
  }

  /** Marks the selected jobs disabled; returns how many matched. */
  disableJobs(options: RemoveJobsOptions): Promise<number> {
    return settle(() => this.setDisabled(options, true));
  }

  /** Clears the disabled mark of the selected jobs; returns how many matched. */
  enableJobs(options: RemoveJobsOptions): Promise<number> {
    return settle(() => this.setDisabled(options, false));
  }

  private setDisabled(options: RemoveJobsOptions, disabled: boolean): number {
    const where = selectionWhere(options);
    if (!where) return 0;
    const sql = `UPDATE "${this.tableName}" SET disabled = ? ${whereClause(where)}`;
    return this.run(sql, disabled ? 1 : 0, ...where.params).changes;
  }

  purgeAllJobs(): Promise<number> {
    return settle(() => this.run(`DELETE FROM "${this.tableName}"`).changes);
  }

  /**
   * Releases a lock the processor took but will not use. A job whose next run is
   * null has already started (a one-off clears it before running), so its lock
   * is left alone: it belongs to the run in progress.
   */
  unlockJob(job: JobParameters): Promise<void> {
    return settle(() => {
      if (job._id) {
        this.run(
          `UPDATE "${this.tableName}" SET locked_at = NULL WHERE id = ? AND next_run_at IS NOT NULL`,
          String(job._id),
        );
      }
    });
  }

  /** Releases the locks of the given jobs unconditionally (Agenda calls this on stop for jobs not yet started). */
  unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    return settle(() => {
      if (jobIds.length > 0) {
        this.run(
          `UPDATE "${this.tableName}" SET locked_at = NULL WHERE id IN (SELECT value FROM json_each(?))`,
          JSON.stringify(jobIds.map(String)),
        );
      }
    });
  }

  /** Locks one known job, only if it is unlocked, enabled and still due at the time the caller saw. */
  lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    return settle(() => {
      if (!job._id) return undefined;
      const row = this.one<JobRow>(
        `UPDATE "${this.tableName}" SET locked_at = ?, last_modified_by = ?
         WHERE id = ? AND name = ? AND locked_at IS NULL AND next_run_at IS ? AND disabled = 0
         RETURNING *`,
        Date.now(),
        options?.lastModifiedBy || null,
        String(job._id),
        job.name,
        ms(job.nextRunAt),
      );
      return row ? rowToJob(row) : undefined;
    });
  }

  /**
   * Finds and locks the next job of `jobName`: either unlocked and due by
   * `nextScanAt`, or locked at or before `lockDeadline` (now minus the job's lock
   * lifetime), which means the worker holding it died or stopped touching it.
   * The second case ignores `nextRunAt`, so a one-off job that was mid-run when
   * its process crashed (its `nextRunAt` already null) is taken up again.
   */
  getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    return settle(() => {
      const lockedAt = ms(now ?? new Date());
      const row = this.immediate(() => {
        const candidate = this.one<{ id: string }>(
          `SELECT id FROM "${this.tableName}"
           WHERE name = ? AND disabled = 0
             AND ((locked_at IS NULL AND next_run_at <= ?) OR locked_at <= ?)
           ORDER BY next_run_at ASC NULLS LAST, priority DESC
           LIMIT 1`,
          jobName,
          ms(nextScanAt),
          ms(lockDeadline),
        );
        if (!candidate) return undefined;
        return this.one<JobRow>(
          `UPDATE "${this.tableName}" SET locked_at = ?, last_modified_by = ? WHERE id = ? RETURNING *`,
          lockedAt,
          options?.lastModifiedBy || null,
          candidate.id,
        );
      });
      return row ? rowToJob(row) : undefined;
    });
  }

  /** Writes the processing state (lock, run times, failures, progress) of a job the caller is running. */
  saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    return settle(() => {
      if (!job._id) throw new Error('Cannot save job state without job ID');
      const { changes } = this.run(
        `UPDATE "${this.tableName}"
         SET locked_at = ?, next_run_at = ?, last_run_at = ?, progress = ?, fail_reason = ?, fail_count = ?,
             failed_at = ?, last_finished_at = ?, last_modified_by = ?
         WHERE id = ? AND name = ?`,
        ms(job.lockedAt),
        ms(job.nextRunAt),
        ms(job.lastRunAt),
        job.progress ?? null,
        job.failReason ?? null,
        job.failCount ?? null,
        ms(job.failedAt),
        ms(job.lastFinishedAt),
        options?.lastModifiedBy || null,
        String(job._id),
        job.name,
      );
      if (changes !== 1) {
        throw new Error(
          `job ${job._id} (name: ${job.name}) cannot be updated in the database, maybe it does not exist anymore?`,
        );
      }
    });
  }

  /**
   * Inserts or updates a job:
   * - with an `_id`: updates that job (and returns the input unchanged if it is gone);
   * - `type: 'single'` (`every`): one job per name; a due `nextRunAt` does not
   *   override the stored one, so redefining a schedule at startup neither skips
   *   nor repeats a pending run;
   * - with `unique`: updates the job matching the key, or with `insertOnly` returns
   *   it untouched; debounce options move `nextRunAt` as Agenda documents;
   * - otherwise inserts a new job with a random UUID.
   */
  saveJob<DATA = unknown>(
    job: JobParameters<DATA>,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters<DATA>> {
    return settle(() => {
      const lastModifiedBy = options?.lastModifiedBy || null;
      const props = describeJob(job, lastModifiedBy);
      const t = this.tableName;
      const assignments = DESCRIBED_COLUMNS.map((c) => `${c} = @${c}`).join(', ');
      const insert = (
        overrides: { next_run_at?: number | null; debounce_started_at?: number } = {},
      ): JobRow =>
        this.returning(
          `INSERT INTO "${t}" (id, ${DESCRIBED_COLUMNS.join(', ')}, debounce_started_at)
           VALUES (@id, ${DESCRIBED_COLUMNS.map((c) => `@${c}`).join(', ')}, @debounce_started_at)
           RETURNING *`,
          { ...props, id: randomUUID(), debounce_started_at: null, ...overrides },
        );

      if (job._id) {
        // fail_* are cleared or set from the input, as the other backends do for a saved job.
        const row = this.one<JobRow>(
          `UPDATE "${t}" SET ${assignments}, fail_reason = @fail_reason, fail_count = @fail_count, failed_at = @failed_at
           WHERE id = @id AND name = @name RETURNING *`,
          {
            ...props,
            id: String(job._id),
            fail_reason: job.failReason ?? null,
            fail_count: job.failCount ?? null,
            failed_at: ms(job.failedAt),
          },
        );
        return row ? (rowToJob(row) as JobParameters<DATA>) : job;
      }

      const now = Date.now();
      if (props.type === 'single') {
        const row = this.immediate(() => {
          const existing = this.one<JobRow>(
            `SELECT * FROM "${t}" WHERE name = ? AND type = 'single'`,
            job.name,
          );
          if (!existing) return insert();
          const keepStored =
            props.next_run_at !== null && props.next_run_at <= now && existing.next_run_at !== null;
          return this.returning(`UPDATE "${t}" SET ${assignments} WHERE id = @id RETURNING *`, {
            ...props,
            next_run_at: keepStored ? existing.next_run_at : props.next_run_at,
            id: existing.id,
          });
        });
        return rowToJob(row) as JobParameters<DATA>;
      }

      if (job.unique) {
        const key = uniqueWhere(job.unique);
        const debounce = job.uniqueOpts?.debounce;
        const row = this.immediate(() => {
          const existing = this.one<JobRow>(
            `SELECT * FROM "${t}" WHERE ${['name = ?', ...key.sql].join(' AND ')} LIMIT 1`,
            job.name,
            ...key.params,
          );
          if (!existing) {
            if (!debounce) return insert();
            // Trailing: the first save opens the quiet period; leading: it runs when asked.
            const trailing = debounce.strategy !== 'leading';
            return insert({
              next_run_at: trailing ? now + debounce.delay : props.next_run_at,
              debounce_started_at: now,
            });
          }
          if (job.uniqueOpts?.insertOnly && !debounce) return existing;
          let nextRunAt = props.next_run_at;
          let debounceStartedAt: number | null = null;
          if (debounce) {
            const started = existing.debounce_started_at ?? now;
            if (debounce.strategy === 'leading') {
              nextRunAt = existing.next_run_at;
              debounceStartedAt = started;
            } else if (debounce.maxWait && now - started >= debounce.maxWait) {
              // Saves kept coming for longer than maxWait: run now and start a fresh window afterwards.
              nextRunAt = now;
            } else {
              nextRunAt = now + debounce.delay;
              debounceStartedAt = started;
            }
          }
          return this.returning(
            `UPDATE "${t}" SET ${assignments}, debounce_started_at = @debounce_started_at WHERE id = @id RETURNING *`,
            { ...props, next_run_at: nextRunAt, debounce_started_at: debounceStartedAt, id: existing.id },
          );
        });
        return rowToJob(row) as JobParameters<DATA>;
      }

      return rowToJob(insert()) as JobParameters<DATA>;
    });
  }
}

/**
 * Agenda backend on a SQLite file, for single-host deployments. It has no
 * notification channel: Agenda polls every `processEvery`. Several processes may
 * share one file (WAL, busy timeout, immediate transactions for locking).
 *
 * @example
 * const db = openSqliteFile(path.join(dataDir, 'jobs.sqlite'));
 * const agenda = new Agenda({ backend: new SqliteJobBackend({ db }) });
 */
export class SqliteJobBackend implements AgendaBackend {
  readonly name = 'SQLite';
  readonly repository: SqliteJobRepository;

  constructor(options: SqliteJobBackendOptions) {
    this.repository = new SqliteJobRepository(options);
  }

  /** True when the backend opened the file itself (`{ path }`); Agenda's stop() then closes it. */
  get ownsConnection(): boolean {
    return this.repository.ownsConnection;
  }

  connect(): Promise<void> {
    return this.repository.connect();
  }

  disconnect(): Promise<void> {
    return this.repository.disconnect();
  }
}

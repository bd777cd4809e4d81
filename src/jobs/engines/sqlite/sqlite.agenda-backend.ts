import { randomUUID } from 'node:crypto';
import type { Database, RunResult, Statement } from 'better-sqlite3';
import { computeJobState } from 'agenda';
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
  JobWithState,
  RemoveJobsOptions,
} from 'agenda';
import { DESCRIBED_COLUMNS, describeJob, ms, rowToJob } from './sqlite.job-rows';
import type { JobRow } from './sqlite.job-rows';
import { addDataFilter, orderBy, selectionWhere, uniqueWhere, whereClause } from './sqlite.job-queries';
import type { Where } from './sqlite.job-queries';

/** Options of {@link SqliteJobBackend}. */
export type SqliteJobBackendOptions = SqliteConnectionOptions & {
  /** Name of the jobs table; its indexes are named after it. Default `agenda_jobs`. */
  tableName?: string;
};

const MAX_CACHED_STATEMENTS = 200;

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

/** How Agenda jobs sit in SQLite rows: the row shape, and the conversions both ways. */
import { toJobId } from 'agenda';
import type { JobId, JobParameters } from 'agenda';

export interface JobRow {
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

export type StoredJob = JobParameters & { _id: JobId };

// Epoch milliseconds keep every date column an INTEGER, so comparisons and ORDER BY are numeric.
// Callers occasionally hand over ISO strings where the types promise a Date, hence `new Date(...)`.
export const ms = (d: Date | string | number | null | undefined): number | null =>
  d === null || d === undefined ? null : new Date(d).getTime();
export const dateOf = (v: number | null): Date | undefined => (v === null ? undefined : new Date(v));
export const parseJson = (text: string | null): unknown =>
  text === null ? null : (JSON.parse(text) as unknown);
export const jsonText = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export function rowToJob(row: JobRow): StoredJob {
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
export function describeJob(job: JobParameters, lastModifiedBy: string | null) {
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
export const DESCRIBED_COLUMNS = Object.keys(
  describeJob({ name: '', priority: 0, nextRunAt: null, type: 'normal', data: null }, null),
);

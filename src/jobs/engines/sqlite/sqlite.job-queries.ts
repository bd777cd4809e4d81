/** The SQL fragments Agenda's job filters, unique keys and sort orders become, with their bound values. */
import type { JobsSort, RemoveJobsOptions, SortDirection } from 'agenda';
import { jsonText, ms } from './sqlite.job-rows';

/** A WHERE fragment with its positional parameters. */
export interface Where {
  sql: string[];
  params: unknown[];
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A JSON path that addresses each segment as an object key, whatever characters it holds. */
export function jsonPath(segments: string[]): string {
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
export function dataEquals(where: Where, segments: string[], value: unknown): void {
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
export function addDataFilter(where: Where, data: unknown, prefix: string[] = []): void {
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
export const UNIQUE_COLUMNS: Record<string, { column: string; kind: 'plain' | 'date' | 'boolean' | 'json' }> =
  {
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
export function uniqueWhere(unique: Record<string, unknown>): Where {
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
export const SORT_COLUMNS: Record<Exclude<keyof JobsSort, 'data'>, { column: string; nullable: boolean }> = {
  nextRunAt: { column: 'next_run_at', nullable: true },
  lastRunAt: { column: 'last_run_at', nullable: true },
  lastFinishedAt: { column: 'last_finished_at', nullable: true },
  priority: { column: 'priority', nullable: false },
  name: { column: 'name', nullable: false },
};

export const sqlDirection = (d: SortDirection): string => (d === 'asc' ? 'ASC' : 'DESC');

/** ORDER BY for listings; unset timestamps go last either way, as in the PostgreSQL Agenda backend. */
export function orderBy(sort: JobsSort | undefined): string {
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
export function selectionWhere(options: RemoveJobsOptions): Where | null {
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

export const whereClause = (where: Where): string =>
  where.sql.length > 0 ? `WHERE ${where.sql.join(' AND ')}` : '';

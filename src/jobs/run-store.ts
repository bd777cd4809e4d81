/**
 * Run records of tier-view jobs: the state a client polls by `run_id`. Agenda
 * owns scheduling and locks; the run store owns what the API reports, so the
 * two can live in the same database (one backend setting) yet neither depends
 * on the other's internal layout.
 */

export const LIFE_CYCLE_STATES = ['PENDING', 'RUNNING', 'TERMINATED', 'INTERNAL_ERROR'] as const;
export type LifeCycleState = (typeof LIFE_CYCLE_STATES)[number];

export const RESULT_STATES = ['SUCCESS', 'FAILED', 'CANCELED', 'TIMEDOUT'] as const;
export type ResultState = (typeof RESULT_STATES)[number];

export interface RunRecord {
  /** Allocated by the store: increasing, durable, never reused. */
  runId: number;
  /** The validated request, as plain JSON. */
  request: Record<string, unknown>;
  lifeCycleState: LifeCycleState;
  /** Set once the run is TERMINATED (or INTERNAL_ERROR). */
  resultState: ResultState | null;
  stateMessage: string;
  userCancelledOrTimedout: boolean;
  /** A cancel arrived while the run was RUNNING; the worker that holds it stops at its next check. */
  cancelRequested: boolean;
  /** Blob keys of the finished files by output key (`tierview_file`, ...); null until SUCCESS. */
  files: Record<string, string> | null;
  /** How many times a worker has started this run (more than one after a crash or a retry). */
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  updatedAt: Date;
}

/** Fields a transition or an update may change. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    | 'lifeCycleState'
    | 'resultState'
    | 'stateMessage'
    | 'userCancelledOrTimedout'
    | 'cancelRequested'
    | 'files'
    | 'attempts'
    | 'startedAt'
    | 'endedAt'
  >
>;

export interface RunStore {
  /** Backend name for logs and health output. */
  readonly name: string;
  /** Connects and creates tables or indexes when missing (idempotent). */
  open(): Promise<void>;
  close(): Promise<void>;
  /** Allocates the next run id and stores a PENDING record for `request`. */
  create(request: Record<string, unknown>, now: Date): Promise<RunRecord>;
  get(runId: number): Promise<RunRecord | null>;
  /**
   * Applies `patch` atomically, only while the record's life-cycle state is one of
   * `from`; `updatedAt` becomes `now`. Returns the record after the change, or
   * null when the run is unknown or in another state (nothing changed).
   */
  transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
  ): Promise<RunRecord | null>;
  /** PENDING runs created before `runId`: the number of runs ahead of it in the queue. */
  countPendingBefore(runId: number): Promise<number>;
  /** Runs currently in `state`. */
  countInState(state: LifeCycleState): Promise<number>;
}

/** The record as stored by backends that keep one JSON document per run: dates as ISO text. */
export type RunDocument = Omit<RunRecord, 'createdAt' | 'startedAt' | 'endedAt' | 'updatedAt'> & {
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
};

/** A fresh PENDING record. */
export function newRunRecord(runId: number, request: Record<string, unknown>, now: Date): RunRecord {
  return {
    runId,
    request,
    lifeCycleState: 'PENDING',
    resultState: null,
    stateMessage: '',
    userCancelledOrTimedout: false,
    cancelRequested: false,
    files: null,
    attempts: 0,
    createdAt: now,
    startedAt: null,
    endedAt: null,
    updatedAt: now,
  };
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
const date = (s: string | null): Date | null => (s === null ? null : new Date(s));

export function toRunDocument(r: RunRecord): RunDocument {
  return {
    ...r,
    createdAt: r.createdAt.toISOString(),
    startedAt: iso(r.startedAt),
    endedAt: iso(r.endedAt),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function fromRunDocument(d: RunDocument): RunRecord {
  return {
    ...d,
    createdAt: new Date(d.createdAt),
    startedAt: date(d.startedAt),
    endedAt: date(d.endedAt),
    updatedAt: new Date(d.updatedAt),
  };
}

/** The record with `patch` applied: what every backend stores on a transition. */
export function applyRunPatch(r: RunRecord, patch: RunPatch, now: Date): RunRecord {
  const next: RunRecord = { ...r, updatedAt: now };
  for (const [k, v] of Object.entries(patch) as [keyof RunPatch, unknown][]) {
    if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = v;
  }
  return next;
}

/**
 * The patch in stored form (undefined fields dropped, so they stay unchanged), plus
 * `updatedAt`, for backends that update fields of a stored document in place. The
 * values go through applyRunPatch and toRunDocument so that dates are encoded
 * exactly as in a whole stored record.
 */
export function toPatchDocument(patch: RunPatch, now: Date): Partial<RunDocument> {
  const full = toRunDocument(applyRunPatch(newRunRecord(0, {}, now), patch, now));
  const keys = Object.keys(patch).filter(
    (k) => patch[k as keyof RunPatch] !== undefined,
  ) as (keyof RunDocument)[];
  return Object.fromEntries([...keys, 'updatedAt'].map((k) => [k, full[k as keyof RunDocument]]));
}

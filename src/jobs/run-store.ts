import type { TierViewRequest } from '../domain/tierview';

/**
 * Run records of tier-view jobs: the state a client polls by `run_id`. Agenda
 * owns scheduling and locks; the run store owns what the API reports, so the
 * two can live in the same database (one jobs engine, chosen by JOBS_BACKEND) yet neither depends
 * on the other's internal layout.
 */

export const LIFE_CYCLE_STATES = ['PENDING', 'RUNNING', 'TERMINATED', 'INTERNAL_ERROR'] as const;
export type LifeCycleState = (typeof LIFE_CYCLE_STATES)[number];

export const RESULT_STATES = ['SUCCESS', 'FAILED', 'CANCELED', 'TIMEDOUT'] as const;
export type ResultState = (typeof RESULT_STATES)[number];

export interface RunRecord {
  /** Allocated by the store: increasing, durable, never reused. */
  runId: number;
  /** The validated request, stored as plain JSON. */
  request: TierViewRequest;
  /**
   * Id of the API key that created the run (never the key itself); only that key
   * sees the run. Null for runs created before runs had owners: no key sees them.
   */
  ownerKeyId: string | null;
  /**
   * The client's name for the request that created the run (the `Idempotency-Key` of
   * its start), unique among its owner's runs; null when none was given.
   */
  idempotencyKey: string | null;
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
  /**
   * The attempt that holds the run while it is RUNNING, and whose files a SUCCESS
   * points at. Each attempt writes files of its own, and commits by a transition
   * guarded by its id, so at most one attempt's files are ever committed.
   */
  attemptId: string | null;
  /** When the holding attempt last showed it is alive; a stale one may be taken over. */
  heartbeatAt: Date | null;
  /**
   * The run has ended and owes its completion callback, which is not queued yet:
   * set by the transition that ends the run, cleared once the delivery is queued.
   * A process that dies between the two leaves the mark for a worker to find.
   */
  callbackDue: boolean;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  updatedAt: Date;
}

export interface CreateOptions {
  ownerKeyId?: string | null;
  /** Most runs the owner may have PENDING or RUNNING, this one included. */
  maxActive?: number;
  /**
   * The client's name for this request: when the owner already has a run created under it,
   * create throws RunKeyTaken with that run and stores nothing (before any quota check).
   */
  idempotencyKey?: string | null;
}

/** The owner already has a run created under the idempotency key given: `run`. */
export class RunKeyTaken extends Error {
  constructor(readonly run: RunRecord) {
    super(`run ${run.runId} was created under this idempotency key`);
  }
}

/** The owner already has `maxActive` runs PENDING or RUNNING. */
export class RunQuotaExceeded extends Error {
  constructor(readonly maxActive: number) {
    super(`at most ${maxActive} runs may be pending or running at once`);
  }
}

/** A condition on the attempt that holds the run, beside the state condition. */
export interface TransitionGuard {
  attemptId: string | null;
  /** Only while no cancel is requested (a SUCCESS committed after a cancel was accepted would contradict it). */
  uncanceled?: boolean;
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
    | 'attemptId'
    | 'heartbeatAt'
    | 'callbackDue'
    | 'startedAt'
    | 'endedAt'
  >
>;

export interface RunStore {
  /** Engine name for logs and health output. */
  readonly name: string;
  /** Connects and creates tables or indexes when missing (idempotent). */
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * Allocates the next run id and stores a PENDING record for `request` owned by
   * `ownerKeyId`; with `maxActive`, only while the owner has fewer runs PENDING or
   * RUNNING than that (checked and written atomically), else it throws
   * RunQuotaExceeded and stores nothing. With `idempotencyKey`, a run of the owner
   * already created under that key makes it throw RunKeyTaken with that run instead
   * (checked and written atomically with the insert, so two creates racing under one
   * key store one run).
   */
  create(request: TierViewRequest, now: Date, options?: CreateOptions): Promise<RunRecord>;
  get(runId: number): Promise<RunRecord | null>;
  /**
   * Applies `patch` atomically, only while the record's life-cycle state is one of
   * `from` and, with a `guard`, its attempt id is `guard.attemptId`; `updatedAt`
   * becomes `now`. Returns the record after the change, or null when the run is
   * unknown or the conditions do not hold (nothing changed).
   */
  transition(
    runId: number,
    from: readonly LifeCycleState[],
    patch: RunPatch,
    now: Date,
    guard?: TransitionGuard,
  ): Promise<RunRecord | null>;
  /** The owner's runs, newest first: `limit` of them after skipping `offset`. */
  listByOwner(ownerKeyId: string, limit: number, offset: number): Promise<RunRecord[]>;
  /** PENDING runs created before `runId`: the number of runs ahead of it in the queue. */
  countPendingBefore(runId: number): Promise<number>;
  /** Runs currently in `state`. */
  countInState(state: LifeCycleState): Promise<number>;
  /**
   * Ended runs (TERMINATED or INTERNAL_ERROR) still marked `callbackDue` whose last
   * change is older than `changedBefore`, lowest id first, at most `limit`.
   */
  listCallbacksDue(changedBefore: Date, limit: number): Promise<RunRecord[]>;
  /**
   * The key of the run ids clients see (see RunIds): `candidate` is stored on the first call over
   * this namespace, and every call after, from any process, returns the one stored first.
   */
  runIdKey(candidate: string): Promise<string>;
}

/** Life-cycle states of a run that has ended. */
export const ENDED_STATES: readonly LifeCycleState[] = ['TERMINATED', 'INTERNAL_ERROR'];

/** The record as stored by run stores that keep one JSON document per run: dates as ISO text. */
export type RunDocument = Omit<
  RunRecord,
  'createdAt' | 'startedAt' | 'endedAt' | 'updatedAt' | 'heartbeatAt'
> & {
  createdAt: string;
  heartbeatAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
};

/** A fresh PENDING record. */
export function newRunRecord(
  runId: number,
  request: TierViewRequest,
  now: Date,
  ownerKeyId: string | null = null,
  idempotencyKey: string | null = null,
): RunRecord {
  return {
    runId,
    request,
    ownerKeyId,
    idempotencyKey,
    lifeCycleState: 'PENDING',
    resultState: null,
    stateMessage: '',
    userCancelledOrTimedout: false,
    cancelRequested: false,
    files: null,
    attempts: 0,
    attemptId: null,
    heartbeatAt: null,
    callbackDue: false,
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
    heartbeatAt: iso(r.heartbeatAt),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** Records stored before a field existed read as its neutral value. */
export function fromRunDocument(d: RunDocument): RunRecord {
  return {
    ...d,
    ownerKeyId: d.ownerKeyId ?? null,
    idempotencyKey: d.idempotencyKey ?? null,
    attemptId: d.attemptId ?? null,
    callbackDue: d.callbackDue ?? false,
    createdAt: new Date(d.createdAt),
    startedAt: date(d.startedAt),
    endedAt: date(d.endedAt),
    heartbeatAt: date(d.heartbeatAt ?? null),
    updatedAt: new Date(d.updatedAt),
  };
}

const PLACEHOLDER_REQUEST: TierViewRequest = {
  root_nodes: '',
  num_tiers: 0,
  direction: 'supplier',
  min_evid_date: null,
  output_multiple_tables: false,
  callback_url: null,
};

/** Whether a record meets a transition's conditions: one rule for every run store that checks in code. */
export function meetsConditions(
  r: RunRecord,
  from: readonly LifeCycleState[],
  guard: TransitionGuard | undefined,
): boolean {
  return (
    from.includes(r.lifeCycleState) &&
    (guard === undefined || (r.attemptId === guard.attemptId && !(guard.uncanceled && r.cancelRequested)))
  );
}

/** The record with `patch` applied: what every run store stores on a transition. */
export function applyRunPatch(r: RunRecord, patch: RunPatch, now: Date): RunRecord {
  const next: RunRecord = { ...r, updatedAt: now };
  for (const [k, v] of Object.entries(patch) as [keyof RunPatch, unknown][]) {
    if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = v;
  }
  return next;
}

/**
 * The patch in stored form (undefined fields dropped, so they stay unchanged), plus
 * `updatedAt`, for run stores that update fields of a stored document in place. The
 * values go through applyRunPatch and toRunDocument so that dates are encoded
 * exactly as in a whole stored record.
 */
export function toPatchDocument(patch: RunPatch, now: Date): Partial<RunDocument> {
  const full = toRunDocument(applyRunPatch(newRunRecord(0, PLACEHOLDER_REQUEST, now), patch, now));
  const keys = Object.keys(patch).filter(
    (k) => patch[k as keyof RunPatch] !== undefined,
  ) as (keyof RunDocument)[];
  return Object.fromEntries([...keys, 'updatedAt'].map((k) => [k, full[k as keyof RunDocument]]));
}

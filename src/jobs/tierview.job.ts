import { randomBytes } from 'node:crypto';
import type { Job } from 'agenda';
import { z } from 'zod';
import type { BlobStore } from '../blobs/blob-store';
import { ExportBudgetExceeded, ExportKeyShareExceeded } from '../blobs/export-budget';
import { AppError } from '../domain/errors';
import type { TierViewRequest } from '../domain/tierview';
import { walkDirection } from '../domain/tierview';
import type { Logger } from '../logger';
import { exportKeys, successMessage } from '../services/tierview.service';
import type { ExportProgress, ExportResult, TierViewService } from '../services/tierview.service';
import type { RunPatch, RunRecord, RunStore, TransitionGuard } from './run-store';
import { unreachableBy } from './engines/unreachable';

export const TIERVIEW_JOB = 'tierview';
/** Tries of one export within an attempt before the run ends FAILED. */
const EXPORT_ATTEMPTS = 3;
/** The longest pause between tries while a store does not answer. */
const STORE_PAUSE_MAX_MS = 30_000;

/** A store an export can wait for. */
type AwayStore = 'the graph database' | 'the file store';

/**
 * Which store an export is waiting for, when it failed because one does not answer: the graph
 * database (an outage its store reports as UNAVAILABLE with a time to come back, not a query over its
 * time limit) or the file store (see fileStoreUnreachable). Null for any other failure.
 */
export function storeAway(e: unknown): AwayStore | null {
  if (e instanceof AppError)
    return e.code === 'UNAVAILABLE' && e.retryAfterS !== undefined ? 'the graph database' : null;
  return fileStoreUnreachable(e) ? 'the file store' : null;
}

/**
 * Whether an export failed because its file store (Cloud Storage) could not be reached or answered
 * that it is unavailable for now: a socket error, or HTTP 408, 429 or 5xx. Such a failure is waited
 * out, not counted against the export's tries: the files are written again once the store answers.
 */
export const fileStoreUnreachable = (e: unknown): boolean => {
  for (let at = e, depth = 0; typeof at === 'object' && at !== null && depth < 4; depth++) {
    const { code } = at as { code?: unknown };
    if (typeof code === 'number' && (code === 408 || code === 429 || (code >= 500 && code <= 599)))
      return true;
    if (socketUnreachable(at)) return true;
    at = (at as { cause?: unknown }).cause;
  }
  return false;
};
const socketUnreachable = unreachableBy(/socket hang up|network timeout/i);

/** The store an export waits for and since when it has not answered; `away` is null once it has. */
interface StoreWaits {
  away: { store: AwayStore; since: Date } | null;
}

/** What the queued job carries: only the run id; the request lives in the run record. */
const TIERVIEW_JOB_INPUT = z.object({ run_id: z.number().int().positive() });
export type TierViewJobInput = z.infer<typeof TIERVIEW_JOB_INPUT>;

export interface TierViewJobOptions {
  runs: RunStore;
  blobs: BlobStore;
  tierview: TierViewService;
  log: Logger;
  /** Runs at once in this worker. */
  concurrency: number;
  timeoutS: number;
  /** Lock lifetime of the job, and how long a holder's heartbeat stays fresh. */
  lockS: number;
  now: () => Date;
  /**
   * Whether a run of `request` owes a completion callback when it ends: the
   * transition that ends it marks it so, in the same step.
   */
  owesCallback: (request: TierViewRequest) => boolean;
  /** Told of every run this job ends (queues the completion callback it owes). */
  notify: (run: RunRecord) => Promise<void>;
  /** Whether the API key of this id is revoked (false for one this process does not know). */
  revokedKey?: (keyId: string) => boolean;
  /** The id clients see of a stored run (JobQueue.publicRunId): it names the files and the log lines. */
  publicRunId: (runId: number) => number;
}

/** The end of a run taken up after the key that started it was revoked. */
export const REVOKED_KEY_MESSAGE = 'canceled: the API key that started it was revoked';

/** Why a running export was stopped. */
class StopReason extends Error {
  constructor(readonly kind: 'CANCELED' | 'TIMEDOUT' | 'SUPERSEDED') {
    super(
      kind === 'CANCELED'
        ? 'canceled by the user'
        : kind === 'TIMEDOUT'
          ? 'time limit reached'
          : 'another attempt took the run over',
    );
  }
}

/** A fresh attempt id: a safe blob key segment, unique across processes. */
const newAttemptId = () => `a${randomBytes(8).toString('hex')}`;

const fmt = (n: number) => n.toLocaleString('en-US');

/** Least time between two writes of a run's progress. */
const PROGRESS_EVERY_MS = 1000;

/** The progress line a client reads while a run is RUNNING. */
export function progressMessage(p: ExportProgress): string {
  if (p.phase === 'companies') return `finding companies within ${p.tiers} tiers: ${fmt(p.companies)} so far`;
  return `tier ${p.tier} of ${p.tiers}: ${fmt(p.companies)} companies, ${fmt(p.rows)} relationships written`;
}

/**
 * The tier-view export as a job: typed input validated once, `perform`, retries
 * of a failed export, and the run's end state. An export's effect happens once
 * however often the job is started: each start is an attempt with an id of its
 * own, its files are named after it, and only the attempt holding the run (a
 * guarded transition in the run store) commits them.
 */
export class TierViewJob {
  private readonly running = new Map<number, AbortController>();

  constructor(private readonly o: TierViewJobOptions) {}

  /** Agenda options: a worker locks no more runs than it runs (see JobQueue). */
  get defineOptions(): {
    concurrency: number;
    lockLimit: number;
    lockLifetime: number;
    removeOnComplete: boolean;
  } {
    return {
      concurrency: this.o.concurrency,
      lockLimit: this.o.concurrency,
      lockLifetime: this.o.lockS * 1000,
      // The run store keeps the run; the queue's row of a finished run would only grow its table.
      removeOnComplete: true,
    };
  }

  /** The job data of a run. */
  static input(runId: number): TierViewJobInput {
    return { run_id: runId };
  }

  /** Stops the run's attempt if this process holds it; returns whether it did. */
  cancel(runId: number): boolean {
    const c = this.running.get(runId);
    c?.abort(new StopReason('CANCELED'));
    return c !== undefined;
  }

  private now(): Date {
    return this.o.now();
  }

  /** How long a holder's heartbeat stays fresh: past it, the holder is taken for dead. */
  private get staleMs(): number {
    return this.o.lockS * 1000;
  }

  /**
   * Makes this attempt the holder of the run: a PENDING run is claimed, a RUNNING
   * one is taken over only when its holder's heartbeat is stale; both guarded by
   * the attempt id read, so of two attempts racing at most one holds the run.
   * Returns the claimed record, or the time to look again (the holder is alive,
   * or another attempt won the race), or null when there is nothing to do.
   */
  private async claim(runId: number, attemptId: string): Promise<RunRecord | Date | null> {
    const before = await this.o.runs.get(runId);
    if (!before || (before.lifeCycleState !== 'PENDING' && before.lifeCycleState !== 'RUNNING')) return null;
    const now = this.now();
    if (before.lifeCycleState === 'RUNNING' && before.heartbeatAt) {
      const freshUntil = before.heartbeatAt.getTime() + this.staleMs;
      if (freshUntil > now.getTime()) return new Date(freshUntil + 1000);
    }
    const claimed = await this.o.runs.transition(
      runId,
      [before.lifeCycleState],
      {
        lifeCycleState: 'RUNNING',
        startedAt: before.startedAt ?? now,
        attempts: before.attempts + 1,
        attemptId,
        heartbeatAt: now,
        stateMessage: before.attempts > 0 ? 'resuming after an interrupted attempt' : 'starting',
      },
      now,
      { attemptId: before.attemptId },
    );
    if (!claimed) return new Date(now.getTime() + this.staleMs);
    if (before.attemptId !== null) {
      // The holder taken over can no longer commit; what it wrote is of no use.
      await this.deleteFiles(
        exportKeys(this.o.publicRunId(runId), before.attemptId, before.request.output_multiple_tables),
      );
    }
    return claimed;
  }

  private async deleteFiles(files: Record<string, string>): Promise<void> {
    for (const key of Object.values(files)) await this.o.blobs.delete(key).catch(() => undefined);
  }

  /**
   * One start of the job: claims the run, exports it with retries, and ends it
   * with the outcome (SUCCESS, FAILED, CANCELED, TIMEDOUT) unless another attempt
   * took it over meanwhile. Never throws: an export's failure is recorded in the
   * run, and a run store that cannot be read or written (its database unreachable)
   * brings the job back once this attempt's hold has lapsed, when that start
   * claims the run anew. Thrown, Agenda would mark the job failed and never start
   * it again, and the run would show RUNNING (or PENDING) for good.
   */
  async perform(job: Job<unknown>): Promise<void> {
    const input = TIERVIEW_JOB_INPUT.safeParse(job.attrs.data);
    if (!input.success) {
      this.o.log.error(
        { data: job.attrs.data, job_id: String(job.attrs._id) },
        'tier view job without a run id',
      );
      return;
    }
    const runId = input.data.run_id;
    const attemptId = newAttemptId();
    const log = this.o.log.child({ run_id: this.o.publicRunId(runId), attempt_id: attemptId });
    try {
      await this.attempt(job, runId, attemptId, log);
    } catch (e) {
      const again = new Date(this.now().getTime() + this.staleMs + 1000);
      log.error(
        { err: e, again_at: again.toISOString() },
        'the run store failed during an attempt; the run is taken up again once its hold lapses',
      );
      job.attrs.nextRunAt = again;
    }
  }

  private async attempt(job: Job<unknown>, runId: number, attemptId: string, log: Logger): Promise<void> {
    const claimed = await this.claim(runId, attemptId);
    if (claimed instanceof Date) {
      // Another attempt holds the run. This start ends, but the job comes back then:
      // were the holder to die, its run would otherwise never be taken up again.
      log.info({ again_at: claimed.toISOString() }, 'run held by another attempt; checking again later');
      job.attrs.nextRunAt = claimed;
      return;
    }
    if (!claimed) return; // ended (canceled while it waited, or finished by another attempt)
    const run = claimed;
    if (run.ownerKeyId !== null && this.o.revokedKey?.(run.ownerKeyId)) {
      // A key revoked (leaked, say) exports nothing more, and tells no callback address of it.
      log.warn({ key_id: run.ownerKeyId }, 'run canceled: its API key was revoked');
      await this.endRun(
        runId,
        attemptId,
        {
          lifeCycleState: 'TERMINATED',
          resultState: 'CANCELED',
          userCancelledOrTimedout: true,
          stateMessage: REVOKED_KEY_MESSAGE,
          callbackDue: false,
        },
        { attemptId },
        log,
      );
      return;
    }
    // One line per attempt: a run started more than once shows as several.
    log.info({ attempt: run.attempts }, 'tier view attempt started');
    const start = this.now();
    // The lock was taken by the scan that found the job: renew it from now.
    await job.touch().catch(() => undefined);
    const request = run.request;
    const guard = { attemptId };
    const controller = new AbortController();
    this.running.set(runId, controller);
    if (run.cancelRequested) controller.abort(new StopReason('CANCELED'));
    const elapsed = start.getTime() - (run.startedAt ?? start).getTime();
    // The limit counts from the first start, so an attempt taken up after a crash may find it spent,
    // or spend it, on time the server was down: the message says so rather than blame the export.
    const timedOut =
      run.attempts <= 1
        ? `stopped after the time limit of ${this.o.timeoutS} s`
        : elapsed >= this.o.timeoutS * 1000
          ? `stopped: the time limit of ${this.o.timeoutS} s, counted from its first start, had passed when it was taken up again after an interrupted attempt (the server stopped while it ran); start it again`
          : `stopped after the time limit of ${this.o.timeoutS} s, counted from its first start (an interrupted attempt included)`;
    const timer = setTimeout(
      () => controller.abort(new StopReason('TIMEDOUT')),
      Math.max(0, this.o.timeoutS * 1000 - elapsed),
    );
    // Renews the lock and shows the run store this attempt is alive; learns of a
    // cancel made through another process, or of a takeover by another attempt.
    const heartbeat = setInterval(
      () => {
        job.touch().catch((e: unknown) => log.warn({ err: e }, 'could not renew the job lock'));
        this.o.runs
          .transition(runId, ['RUNNING'], { heartbeatAt: this.now() }, this.now(), guard)
          .then((r) => {
            if (!r) controller.abort(new StopReason('SUPERSEDED'));
            else if (r.cancelRequested) controller.abort(new StopReason('CANCELED'));
          })
          .catch((e: unknown) => log.warn({ err: e }, 'could not record the heartbeat'));
      },
      Math.max(200, this.staleMs / 3),
    );
    // Progress is written at most once a second, the latest of the second: one that came within the
    // second after a write is written when the second ends, so the message never sticks at a stage
    // the export has left (the first, 'finding companies: 0 so far', often stayed to the end).
    let lastWrite = 0;
    let latest: ExportProgress | null = null;
    let trailing: NodeJS.Timeout | null = null;
    let pendingWrite: Promise<unknown> = Promise.resolve();
    const writeProgress = () => {
      trailing = null;
      const p = latest;
      latest = null;
      if (!p) return;
      lastWrite = Date.now();
      // One after another, so that an earlier message never lands after a later one.
      pendingWrite = pendingWrite
        .then(() =>
          this.o.runs.transition(runId, ['RUNNING'], { stateMessage: progressMessage(p) }, this.now(), guard),
        )
        .catch(() => undefined);
    };
    const onProgress = (p: ExportProgress) => {
      latest = p;
      if (trailing) return;
      const wait = lastWrite + PROGRESS_EVERY_MS - Date.now();
      if (wait <= 0) writeProgress();
      else trailing = setTimeout(writeProgress, wait);
    };
    let final: RunRecord | null = null;
    const waits: StoreWaits = { away: null };
    try {
      let result: ExportResult | null = null;
      let failure: unknown = null;
      try {
        result = await this.exportWithRetries(
          runId,
          attemptId,
          request,
          run.ownerKeyId,
          onProgress,
          controller.signal,
          log,
          waits,
        );
      } catch (e) {
        failure = e;
      }
      // A complete export is not thrown away for the time its end takes to record.
      clearTimeout(timer);
      if (trailing) clearTimeout(trailing);
      trailing = null;
      latest = null;
      await pendingWrite;
      const reason = controller.signal.reason as unknown;
      let stop = reason instanceof StopReason ? reason : failure instanceof StopReason ? failure : null;
      // Ends the run as this attempt (see endRecorded), with what every end records.
      const end = (patch: RunPatch, g: TransitionGuard = guard) =>
        this.endRun(runId, attemptId, { callbackDue: this.o.owesCallback(request), ...patch }, g, log);
      if (result && !stop) {
        // The commit: only the holding attempt's transition applies, so a SUCCESS
        // points at the files of exactly one complete attempt; and only while no cancel
        // is requested, which another process may have recorded since the last heartbeat.
        final = await end(
          {
            lifeCycleState: 'TERMINATED',
            resultState: 'SUCCESS',
            stateMessage: successMessage(result),
            files: result.files,
          },
          { ...guard, uncanceled: true },
        );
        if (final) {
          log.info(
            {
              rows: result.rows,
              companies: result.companies,
              bytes: result.bytes,
              ms: Date.now() - start.getTime(),
              direction: walkDirection(request.direction),
            },
            'tier view exported',
          );
        } else {
          const now = await this.recorded(() => this.o.runs.get(runId), log);
          if (now?.lifeCycleState === 'RUNNING' && now.attemptId === attemptId && now.cancelRequested) {
            stop = new StopReason('CANCELED');
          } else {
            await this.deleteFiles(result.files);
            log.warn('export finished after another attempt took the run over; its files were dropped');
          }
        }
      }
      if (stop?.kind === 'SUPERSEDED') {
        log.warn('another attempt took the run over; this one stopped');
      } else if (stop) {
        if (result) await this.deleteFiles(result.files);
        final = await end({
          lifeCycleState: 'TERMINATED',
          resultState: stop.kind,
          userCancelledOrTimedout: true,
          stateMessage:
            stop.kind === 'CANCELED'
              ? 'canceled by the user'
              : waits.away === null
                ? timedOut
                : `${timedOut}; ${waits.away.store} had not answered since ${waits.away.since.toISOString()}`,
        });
      } else if (!result) {
        const known = failure instanceof AppError ? failure : null;
        if (!known) log.error({ err: failure }, 'tier view export failed');
        // The operator's to act on, with what the run's message leaves out.
        else if (known instanceof ExportBudgetExceeded || known instanceof ExportKeyShareExceeded)
          log.warn(
            { max_bytes: known.maxBytes, used_bytes: known.usedBytes ?? null, key_id: run.ownerKeyId },
            known instanceof ExportBudgetExceeded
              ? 'tier view export stopped: export files would pass EXPORT_MAX_BYTES'
              : "tier view export stopped: the key's export files would pass EXPORT_MAX_BYTES_PER_KEY",
          );
        final = await end({
          lifeCycleState: known ? 'TERMINATED' : 'INTERNAL_ERROR',
          resultState: 'FAILED',
          stateMessage: known ? known.message : 'internal error while exporting; the error was logged',
        });
      }
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
      if (this.running.get(runId) === controller) this.running.delete(runId);
    }
    if (final) await this.o.notify(final);
  }

  /** Ends the run as this attempt, now, with `patch` (see endRecorded). */
  private endRun(
    runId: number,
    attemptId: string,
    patch: RunPatch,
    guard: TransitionGuard,
    log: Logger,
  ): Promise<RunRecord | null> {
    return this.endRecorded(
      runId,
      attemptId,
      () => this.o.runs.transition(runId, ['RUNNING'], { ...patch, endedAt: this.now() }, this.now(), guard),
      log,
    );
  }

  /**
   * The transition ending the run, through {@link recorded}. A write tried again may have been
   * applied the first time with its answer lost (a connection dropped after the database took it):
   * then the run is found ended by this attempt, which is the write's success, not another attempt's
   * takeover (whose files would be dropped, leaving a SUCCESS pointing at nothing).
   */
  private async endRecorded(
    runId: number,
    attemptId: string,
    write: () => Promise<RunRecord | null>,
    log: Logger,
  ): Promise<RunRecord | null> {
    let tries = 0;
    const ended = await this.recorded(() => {
      tries++;
      return write();
    }, log);
    if (ended || tries === 1) return ended;
    const run = await this.recorded(() => this.o.runs.get(runId), log);
    return run && run.attemptId === attemptId && run.lifeCycleState !== 'RUNNING' ? run : null;
  }

  /**
   * A read or write of the run store at the end of an attempt, tried again for as long as the
   * attempt's hold lasts (a database failing over, a connection dropped): the export is done, and
   * recording its end is all that is left. Past that the error goes to `perform`, which brings the
   * job back; the attempt that then takes the run over drops this one's files.
   */
  private async recorded<T>(write: () => Promise<T>, log: Logger): Promise<T> {
    const until = Date.now() + this.staleMs;
    for (let pause = 250; ; pause = Math.min(pause * 2, 5000)) {
      try {
        return await write();
      } catch (e) {
        if (Date.now() + pause > until) throw e;
        log.warn({ err: e, retry_in_ms: pause }, 'could not record the end of the run; trying again');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * Runs the export, trying again (up to EXPORT_ATTEMPTS, with a growing pause)
   * after an unexpected error such as the engine running short of memory under
   * load; expected failures (unknown root) and stops are not retried. While the
   * graph database or the file store does not answer (see storeAway) it tries
   * again without a count, pauses doubling up to STORE_PAUSE_MAX_MS, until the
   * run's time limit stops it; `waits` tells the caller which store has not
   * answered since when.
   */
  private async exportWithRetries(
    runId: number,
    attemptId: string,
    request: TierViewRequest,
    owner: string | null,
    onProgress: (p: ExportProgress) => void,
    signal: AbortSignal,
    log: Logger,
    waits: StoreWaits,
  ): Promise<ExportResult> {
    let attempt = 1;
    for (let storeTries = 0; ;) {
      try {
        const result = await this.o.tierview.export(
          this.o.publicRunId(runId),
          attemptId,
          request,
          onProgress,
          signal,
          owner,
        );
        waits.away = null;
        return result;
      } catch (e) {
        if (signal.aborted) throw e;
        const away = storeAway(e);
        if (away === null && e instanceof AppError) throw e;
        let pause: number;
        let message: string;
        if (away !== null) {
          // Waited out for as long as the run's time limit allows: the walk is done again, and its
          // files written, once the store answers.
          waits.away = { store: away, since: waits.away?.since ?? this.now() };
          storeTries++;
          pause = Math.min(1000 * 2 ** (storeTries - 1), STORE_PAUSE_MAX_MS);
          message = `waiting for ${away}, which does not answer; trying again in ${Math.round(pause / 1000)} s`;
          const fields = { err: e, tries: storeTries, retry_in_ms: pause };
          const line = `${away} does not answer; the export waits for it`;
          if (storeTries === 1) log.warn(fields, line);
          else log.info(fields, line);
        } else {
          if (attempt >= EXPORT_ATTEMPTS) throw e;
          log.warn({ err: e, attempt }, 'tier view export failed; trying again');
          pause = 1000 * 4 ** (attempt - 1);
          attempt++;
          message = `retrying after an error (attempt ${attempt} of ${EXPORT_ATTEMPTS})`;
        }
        await this.o.runs
          .transition(runId, ['RUNNING'], { stateMessage: message }, this.now(), { attemptId })
          .catch(() => undefined);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pause);
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
        signal.throwIfAborted();
      }
    }
  }
}

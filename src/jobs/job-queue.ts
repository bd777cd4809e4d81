import { Agenda } from 'agenda';
import type { AgendaBackend, Job } from 'agenda';
import type { BlobStore } from '../blobs/blob-store';
import { AppError, badRequest, notFound } from '../domain/errors';
import type { TierViewRequest } from '../domain/tierview';
import { walkDirection } from '../domain/tierview';
import type { Logger } from '../logger';
import type { ExportProgress, ExportResult, TierViewService } from '../services/tierview.service';
import type { GraphStore } from '../store/graph-store';
import type { HostRule } from '../domain/callback-hosts';
import { checkCallbackUrl } from '../domain/callback-hosts';
import { CALLBACK_CONCURRENCY, CallbackJob } from './callback.job';
import type { CallbackSender } from './callbacks';
import type { LifeCycleState, RunRecord, RunStore } from './run-store';

export const TIERVIEW_JOB = 'tierview';
const CLEANUP_JOB = 'exports-cleanup';
/** Tries of one export within a run before it ends FAILED. */
const EXPORT_ATTEMPTS = 3;

/** What a client sees of a run (spec 4.6). */
export interface JobView {
  run_id: string;
  state: {
    life_cycle_state: LifeCycleState;
    result_state?: string;
    state_message: string;
    user_cancelled_or_timedout: boolean;
  };
  output: null | Record<string, never> | { result: string; truncated: boolean };
}

export interface JobQueueOptions {
  backend: AgendaBackend;
  runs: RunStore;
  store: GraphStore;
  blobs: BlobStore;
  tierview: TierViewService;
  log: Logger;
  /** Run jobs in this process (false: only queue them). */
  worker: boolean;
  concurrency: number;
  timeoutS: number;
  lockS: number;
  pollMs: number;
  maxTiers: number;
  downloadTtlS: number;
  retentionS: number;
  callbacks: { rules: HostRule[]; allowHttp: boolean; sender: CallbackSender | null };
  now?: () => Date;
}

/** Why a running export was stopped. */
class StopReason extends Error {
  constructor(readonly kind: 'CANCELED' | 'TIMEDOUT') {
    super(kind === 'CANCELED' ? 'canceled by the user' : 'time limit reached');
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The progress line a client reads while a run is RUNNING. */
export function progressMessage(p: ExportProgress): string {
  if (p.phase === 'companies') return `finding companies within ${p.tiers} tiers: ${fmt(p.companies)} so far`;
  return `tier ${p.tier} of ${p.tiers}: ${fmt(p.companies)} companies, ${fmt(p.rows)} relationships written`;
}

/**
 * Tier-view runs on Agenda. The run store keeps what clients poll; Agenda keeps
 * the queue and the locks, so a run whose worker died is taken up again once
 * its lock lapses, and a run waits in the queue while `concurrency` others run.
 */
export class JobQueue {
  readonly agenda: Agenda;
  private readonly running = new Map<number, AbortController>();
  private readonly now: () => Date;
  private readonly callbackJob: CallbackJob;
  private started = false;

  constructor(private readonly o: JobQueueOptions) {
    this.now = o.now ?? (() => new Date());
    this.agenda = new Agenda({
      backend: o.backend,
      processEvery: o.pollMs,
      // Room beside the exports, so a callback never waits for a long export to end.
      maxConcurrency: o.concurrency + CALLBACK_CONCURRENCY + 1,
      defaultConcurrency: o.concurrency,
      defaultLockLifetime: o.lockS * 1000,
    });
    this.agenda.on('error', (e: unknown) => o.log.error({ err: e }, 'job queue error'));
    if (o.worker) {
      this.agenda.define(TIERVIEW_JOB, (job: Job<{ run_id: number }>) => this.perform(job), {
        concurrency: o.concurrency,
        lockLifetime: o.lockS * 1000,
      });
      this.agenda.define(CLEANUP_JOB, () => this.cleanup(), { concurrency: 1 });
    }
    this.callbackJob = new CallbackJob({
      ...o.callbacks,
      log: o.log.child({ module: 'callbacks' }),
      payload: async (runId) => {
        const run = await o.runs.get(runId);
        return run && this.toView(run);
      },
    });
    if (o.worker) this.callbackJob.define(this.agenda);
  }

  async start(): Promise<void> {
    await this.o.runs.open();
    if (this.o.worker) {
      await this.agenda.start();
      await this.agenda.every('10 minutes', CLEANUP_JOB);
    } else {
      await this.agenda.ready;
    }
    this.started = true;
  }

  /** Stops taking jobs and waits up to `graceMs` for running ones; unfinished ones resume after a restart. */
  async close(graceMs = 10_000): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.o.worker) {
      try {
        await this.agenda.drain(graceMs);
      } catch (e) {
        this.o.log.warn({ err: e }, 'job queue did not drain');
      }
    } else {
      await this.agenda.stop();
    }
    await this.o.callbacks.sender?.close();
    await this.o.runs.close();
  }

  /** Largest `num_tiers` this server accepts. */
  get maxTiers(): number {
    return this.o.maxTiers;
  }

  /** A run id from a path or a GraphQL argument: a positive integer. */
  parseRunId(text: string): number {
    if (!/^[1-9]\d{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
      throw badRequest([{ field: 'path.run_id', reason: 'must be a positive integer' }]);
    }
    return Number(text);
  }

  /**
   * Queues a run of a request that parseTierViewRequest has accepted, once its root
   * exists and its callback host is allowed; the id is durable and never reused.
   */
  async submit(request: TierViewRequest): Promise<RunRecord> {
    if (request.callback_url !== null) {
      const check = checkCallbackUrl(request.callback_url, this.o.callbacks.rules, {
        allowHttp: this.o.callbacks.allowHttp,
      });
      if (!check.ok) {
        throw new AppError('BAD_REQUEST', `body.callback_url: ${check.reason}`, [
          { field: 'body.callback_url', reason: check.reason },
        ]);
      }
    }
    if (!(await this.o.store.companyExists(request.root_nodes)))
      throw notFound('company', request.root_nodes);
    const run = await this.o.runs.create({ ...request }, this.now());
    try {
      await this.agenda.now(TIERVIEW_JOB, { run_id: run.runId });
    } catch (e) {
      await this.o.runs.transition(
        run.runId,
        ['PENDING'],
        {
          lifeCycleState: 'INTERNAL_ERROR',
          resultState: 'FAILED',
          stateMessage: 'could not be queued',
          endedAt: this.now(),
        },
        this.now(),
      );
      throw e;
    }
    return run;
  }

  /** The run as clients see it; download links are signed afresh on every call. */
  async view(runId: number): Promise<JobView> {
    const run = await this.o.runs.get(runId);
    if (!run) throw notFound('run', String(runId));
    return this.toView(run);
  }

  /** Cancels a pending or running run; a finished run is left as it is. */
  async cancel(runId: number): Promise<JobView> {
    const now = this.now();
    const run = await this.o.runs.get(runId);
    if (!run) throw notFound('run', String(runId));
    const canceled = await this.o.runs.transition(
      runId,
      ['PENDING'],
      {
        lifeCycleState: 'TERMINATED',
        resultState: 'CANCELED',
        userCancelledOrTimedout: true,
        stateMessage: 'canceled by the user before it started',
        endedAt: now,
      },
      now,
    );
    if (canceled) {
      await this.agenda.cancel({ name: TIERVIEW_JOB, data: { run_id: runId } }).catch(() => 0);
      await this.notify(canceled);
      return this.toView(canceled);
    }
    const flagged = await this.o.runs.transition(runId, ['RUNNING'], { cancelRequested: true }, now);
    // The worker holding the run may be this process (stop it now) or another (it polls the flag).
    this.running.get(runId)?.abort(new StopReason('CANCELED'));
    return this.toView(flagged ?? (await this.o.runs.get(runId)) ?? run);
  }

  private async toView(run: RunRecord): Promise<JobView> {
    const state: JobView['state'] = {
      life_cycle_state: run.lifeCycleState,
      state_message: run.stateMessage,
      user_cancelled_or_timedout: run.userCancelledOrTimedout,
    };
    if (run.resultState && (run.lifeCycleState === 'TERMINATED' || run.lifeCycleState === 'INTERNAL_ERROR')) {
      state.result_state = run.resultState;
    }
    const view: JobView = { run_id: String(run.runId), state, output: null };
    if (run.lifeCycleState === 'PENDING') {
      const ahead = await this.o.runs.countPendingBefore(run.runId);
      const limit = `up to ${this.o.concurrency} ${this.o.concurrency === 1 ? 'run' : 'runs'} at once`;
      state.state_message =
        ahead === 0
          ? `queued: next to start (${limit})`
          : `queued: ${fmt(ahead)} ${ahead === 1 ? 'run' : 'runs'} ahead (${limit})`;
    } else if (run.lifeCycleState === 'RUNNING') {
      view.output = {};
      if (run.cancelRequested) state.state_message = `cancel requested; stopping (${run.stateMessage})`;
    } else if (run.resultState === 'SUCCESS' && run.files) {
      const expires = (run.endedAt ?? run.updatedAt).getTime() + this.o.retentionS * 1000;
      if (expires <= this.now().getTime()) {
        state.state_message = `the export files were deleted on ${new Date(expires).toISOString()}; start a new run`;
      } else {
        const links: Record<string, string> = {};
        for (const [k, key] of Object.entries(run.files)) {
          links[k] = await this.o.blobs.signedUrl(key, this.o.downloadTtlS);
        }
        view.output = { result: JSON.stringify(links), truncated: false };
      }
    }
    return view;
  }

  private async perform(job: Job<{ run_id: number }>): Promise<void> {
    const runId = job.attrs.data.run_id;
    const log = this.o.log.child({ run_id: runId });
    const before = await this.o.runs.get(runId);
    if (!before) return;
    const start = this.now();
    const run = await this.o.runs.transition(
      runId,
      ['PENDING', 'RUNNING'],
      {
        lifeCycleState: 'RUNNING',
        startedAt: before.startedAt ?? start,
        attempts: before.attempts + 1,
        stateMessage: before.attempts > 0 ? 'resuming after an interrupted attempt' : 'starting',
      },
      start,
    );
    if (!run) return; // canceled while it waited
    const request = run.request as unknown as TierViewRequest;
    const controller = new AbortController();
    this.running.set(runId, controller);
    if (run.cancelRequested) controller.abort(new StopReason('CANCELED'));
    const elapsed = start.getTime() - (run.startedAt ?? start).getTime();
    const timer = setTimeout(
      () => controller.abort(new StopReason('TIMEDOUT')),
      Math.max(0, this.o.timeoutS * 1000 - elapsed),
    );
    // Renew the lock and look for a cancel made through another process.
    const heartbeat = setInterval(
      () => {
        job.touch().catch((e: unknown) => log.warn({ err: e }, 'could not renew the job lock'));
        this.o.runs
          .get(runId)
          .then((r) => {
            if (r?.cancelRequested) controller.abort(new StopReason('CANCELED'));
          })
          .catch(() => undefined);
      },
      Math.max(200, (this.o.lockS * 1000) / 3),
    );
    let lastWrite = 0;
    let pendingWrite: Promise<unknown> = Promise.resolve();
    const onProgress = (p: ExportProgress) => {
      const t = Date.now();
      if (t - lastWrite < 1000) return;
      lastWrite = t;
      pendingWrite = this.o.runs
        .transition(runId, ['RUNNING'], { stateMessage: progressMessage(p) }, this.now())
        .catch(() => undefined);
    };
    let final: RunRecord | null = null;
    try {
      const result = await this.exportWithRetries(runId, request, onProgress, controller.signal, log);
      await pendingWrite;
      final = await this.o.runs.transition(
        runId,
        ['RUNNING'],
        {
          lifeCycleState: 'TERMINATED',
          resultState: 'SUCCESS',
          stateMessage: '',
          files: result.files,
          endedAt: this.now(),
        },
        this.now(),
      );
      if (!final) {
        for (const key of Object.values(result.files)) await this.o.blobs.delete(key).catch(() => undefined);
      }
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
    } catch (e) {
      await pendingWrite;
      const reason = controller.signal.reason as unknown;
      const stop = reason instanceof StopReason ? reason : e instanceof StopReason ? e : null;
      if (stop) {
        final = await this.o.runs.transition(
          runId,
          ['RUNNING'],
          {
            lifeCycleState: 'TERMINATED',
            resultState: stop.kind,
            userCancelledOrTimedout: true,
            stateMessage:
              stop.kind === 'CANCELED'
                ? 'canceled by the user'
                : `stopped after the time limit of ${this.o.timeoutS} s`,
            endedAt: this.now(),
          },
          this.now(),
        );
      } else {
        const known = e instanceof AppError;
        if (!known) log.error({ err: e }, 'tier view export failed');
        final = await this.o.runs.transition(
          runId,
          ['RUNNING'],
          {
            lifeCycleState: known ? 'TERMINATED' : 'INTERNAL_ERROR',
            resultState: 'FAILED',
            stateMessage: known ? e.message : 'internal error while exporting; the error was logged',
            endedAt: this.now(),
          },
          this.now(),
        );
      }
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
      this.running.delete(runId);
    }
    if (final) await this.notify(final);
  }

  /**
   * Runs the export, trying again (up to EXPORT_ATTEMPTS, with a growing pause)
   * after an unexpected error such as the engine running short of memory under
   * load; expected failures (unknown root) and stops are not retried.
   */
  private async exportWithRetries(
    runId: number,
    request: TierViewRequest,
    onProgress: (p: ExportProgress) => void,
    signal: AbortSignal,
    log: Logger,
  ): Promise<ExportResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.o.tierview.export(runId, request, onProgress, signal);
      } catch (e) {
        if (attempt >= EXPORT_ATTEMPTS || e instanceof AppError || signal.aborted) throw e;
        log.warn({ err: e, attempt }, 'tier view export failed; trying again');
        await this.o.runs
          .transition(
            runId,
            ['RUNNING'],
            { stateMessage: `retrying after an error (attempt ${attempt + 1} of ${EXPORT_ATTEMPTS})` },
            this.now(),
          )
          .catch(() => undefined);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 1000 * 4 ** (attempt - 1));
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
        signal.throwIfAborted();
      }
    }
  }

  /** Queues the completion callback, if the run asked for one; a worker delivers it, here or elsewhere. */
  private async notify(run: RunRecord): Promise<void> {
    const url = (run.request as unknown as TierViewRequest).callback_url;
    if (!url || !this.o.callbacks.sender) return;
    await this.callbackJob
      .enqueue(this.agenda, run.runId, url)
      .catch((e: unknown) => this.o.log.warn({ err: e, run_id: run.runId }, 'callback not queued'));
  }

  private async cleanup(): Promise<void> {
    const before = new Date(this.now().getTime() - this.o.retentionS * 1000);
    const n = await this.o.blobs.deleteOlderThan(before);
    if (n > 0) this.o.log.info({ files: n }, 'expired export files deleted');
  }
}

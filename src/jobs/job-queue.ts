import { EventEmitter } from 'node:events';
import { Agenda, InMemoryNotificationChannel } from 'agenda';
import { z } from 'zod';
import type { AgendaBackend, Job, JobId } from 'agenda';
import type { BlobStore } from '../blobs/blob-store';
import { DEFAULT_LIMITS } from '../config/env';
import { AppError, badRequest, notFound } from '../domain/errors';
import { check, pageWithDefaults } from '../domain/params';
import type { Limits } from '../domain/params';
import { effectiveRequest } from '../domain/tierview';
import type { TierViewRequest } from '../domain/tierview';
import { logAtMostEvery } from '../logger';
import type { Logger } from '../logger';
import type { TierViewService } from '../services/tierview.service';
import type { GraphStore } from '../store/graph-store';
import type { HostRule } from '../domain/callback-hosts';
import { checkCallbackUrl } from '../domain/callback-hosts';
import { canonicalJson } from '../domain/idempotency-key';
import { CALLBACK_CONCURRENCY, CallbackJob } from './callback.job';
import type { CallbackSender } from './callbacks';
import { RUN_ID_TEXT, RunIds } from './run-ids';
import { ENDED_STATES, RunKeyTaken, RunQuotaExceeded } from './run-store';
import { withSettledUnlocks } from './settled-unlocks';
import type { LifeCycleState, RunRecord, RunStore } from './run-store';
import { TIERVIEW_JOB, TierViewJob } from './tierview.job';

const CLEANUP_JOB = 'exports-cleanup';

/**
 * How often a worker looks for ended runs whose callback was never queued (their
 * process died between ending the run and queuing the delivery), and how long a
 * mark must have stood: a younger one may belong to a process queuing it right now.
 */
const OWED_CALLBACKS_EVERY_MS = 60_000;
const OWED_CALLBACK_AGE_MS = 30_000;

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * Who asks: the id of the API key of the request (its runs only), or undefined
 * for the process itself (tests, tools), which sees every run. Runs stored before
 * runs had owners have none and are seen by no key.
 */
export type Caller = string | null | undefined;

/** A page of the caller's runs, newest first. */
export interface JobPage {
  results: JobView[];
  has_more: boolean;
}

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
  agendaBackend: AgendaBackend;
  runs: RunStore;
  store: GraphStore;
  blobs: BlobStore;
  tierview: TierViewService;
  log: Logger;
  /** Most runs one key may have PENDING or RUNNING; unset: no bound. */
  maxActivePerKey?: number;
  /** Bounds of `limit` and `offset` in run lists. */
  limits?: Limits;
  /** Run jobs in this process (false: only queue them). */
  worker: boolean;
  /**
   * Whether other processes can take runs from this queue (false for the embedded engine's file, which
   * is this process's own): without a worker here, runs of an unshared queue never start, which
   * starting and each pending run then say.
   */
  shared?: boolean;
  concurrency: number;
  timeoutS: number;
  lockS: number;
  pollMs: number;
  maxTiers: number;
  downloadTtlS: number;
  retentionS: number;
  callbacks: { rules: HostRule[]; allowHttp: boolean; publicOnly?: boolean; sender: CallbackSender | null };
  now?: () => Date;
  /**
   * Whether the API key of this id is revoked (false for one this process does not know): a run of a
   * revoked key that has not started is canceled when a worker takes it up, and no callback of its
   * runs is sent.
   */
  revokedKey?: (keyId: string) => boolean;
}

/**
 * Retry-After of a start refused for the key's runs at once: a hint, since when a run ends is not
 * known; a client polling its runs may start again as soon as one has ended.
 */
const RUN_SLOT_RETRY_S = 10;

/** How long closing the queue waits for running exports to finish before it lets go of them. */
export const QUEUE_DRAIN_MS = 10_000;

/**
 * Tier-view runs on Agenda. The run store keeps what clients poll; Agenda keeps
 * the queue and the locks, so a run whose worker died is taken up again once
 * its lock lapses, and a run waits in the queue while `concurrency` others run.
 */
export class JobQueue {
  readonly agenda: Agenda;
  private readonly tierview: TierViewJob;
  private readonly now: () => Date;
  private readonly callbackJob: CallbackJob;
  private started = false;
  /** Read from the run store by start(): the ids clients see. */
  private runIds: RunIds | null = null;
  private owedCallbacksTimer: NodeJS.Timeout | null = null;

  private readonly pageSchema;

  constructor(private readonly o: JobQueueOptions) {
    this.now = o.now ?? (() => new Date());
    this.pageSchema = z.object(pageWithDefaults(o.limits ?? DEFAULT_LIMITS));
    this.tierview = new TierViewJob({
      runs: o.runs,
      blobs: o.blobs,
      tierview: o.tierview,
      log: o.log,
      concurrency: o.concurrency,
      timeoutS: o.timeoutS,
      lockS: o.lockS,
      now: this.now,
      owesCallback: (request) => this.owesCallback(request),
      notify: (run) => this.notify(run),
      revokedKey: o.revokedKey,
      publicRunId: (runId) => this.publicRunId(runId),
    });
    const channel = o.agendaBackend.notificationChannel ?? new InMemoryNotificationChannel();
    // The PostgreSQL and Redis channels report a lost connection as an 'error' event and reconnect
    // by themselves; unheard, the event would end the process while its database is away.
    if (channel instanceof EventEmitter) {
      const warn = logAtMostEvery(60_000, o.log);
      channel.on('error', (e: unknown) =>
        warn(e, 'job notifications lost their connection; polling meanwhile'),
      );
    }
    this.agenda = new Agenda({
      backend: withSettledUnlocks(o.agendaBackend, o.log),
      // A job queued in this process wakes this process's worker at once instead of
      // waiting for the next poll. Backends that notify across processes (PostgreSQL
      // LISTEN/NOTIFY, Redis pub/sub) bring a channel of their own; the others are
      // woken in process, and other processes find the job at their next poll.
      notificationChannel: channel,
      processEvery: o.pollMs,
      // Room beside the exports, so a callback never waits for a long export to end.
      maxConcurrency: o.concurrency + CALLBACK_CONCURRENCY + 1,
      defaultConcurrency: o.concurrency,
      defaultLockLifetime: o.lockS * 1000,
    });
    // While its database is down the queue fails at every poll: a line a minute says so.
    const failed = logAtMostEvery(60_000, o.log, 'error');
    this.agenda.on('error', (e: unknown) => failed(e, 'job queue error'));
    if (o.worker) {
      // A worker locks no more runs than it runs: a job locked while it waits for a
      // free slot would see its lock lapse after `lockS`, and be locked and started
      // a second time while the first start still waited or ran.
      this.agenda.define(
        TIERVIEW_JOB,
        (job: Job<unknown>) => this.tierview.perform(job),
        this.tierview.defineOptions,
      );
      this.agenda.define(CLEANUP_JOB, () => this.cleanup(), { concurrency: 1, lockLimit: 1 });
      // A worker locks no more runs than it runs, so none waits locked beside it: when one ends,
      // the worker looks for the next queued run at once (after the ended one has left its slot)
      // rather than at its next poll, which made a queue of short runs start one a poll.
      this.agenda.on(`complete:${TIERVIEW_JOB}`, () =>
        setImmediate(() => {
          if (!this.started || channel.state !== 'connected') return;
          const now = new Date();
          channel
            .publish({
              jobId: 'next' as JobId,
              jobName: TIERVIEW_JOB,
              nextRunAt: now,
              priority: 0,
              timestamp: now,
            })
            .catch((e: unknown) => o.log.debug({ err: e }, 'could not look for the next run at once'));
        }),
      );
    }
    this.callbackJob = new CallbackJob({
      ...o.callbacks,
      log: o.log.child({ module: 'callbacks' }),
      publicRunId: (runId) => this.publicRunId(runId),
      payload: async (runId) => {
        const run = await o.runs.get(runId);
        // A revoked key's runs are reported to no one: as if gone.
        if (run?.ownerKeyId && o.revokedKey?.(run.ownerKeyId)) return null;
        return run && { body: await this.toView(run), keyId: run.ownerKeyId };
      },
    });
    if (o.worker) this.callbackJob.define(this.agenda);
  }

  async start(): Promise<void> {
    await this.o.runs.open();
    this.runIds = await RunIds.of(this.o.runs);
    if (this.o.worker) {
      // Every job type gets its own slots, so a locked job never waits for a slot
      // held by another type (its lock would lapse meanwhile).
      const slots = Object.values(this.agenda.definitions).reduce((n, d) => n + (d.concurrency || 1), 0);
      this.agenda.maxConcurrency(Math.max(slots, this.o.concurrency));
      await this.agenda.start();
      await this.agenda.every('10 minutes', CLEANUP_JOB);
    } else {
      await this.agenda.ready;
    }
    this.started = true;
    if (this.unworked())
      this.o.log.warn(
        'JOBS_WORKER=false on a queue no other process takes runs from (JOBS_BACKEND=embedded): export runs are accepted but never start',
      );
    if (this.o.worker) {
      await this.queueOwedCallbacks(OWED_CALLBACK_AGE_MS);
      this.owedCallbacksTimer = setInterval(
        () => void this.queueOwedCallbacks(OWED_CALLBACK_AGE_MS),
        OWED_CALLBACKS_EVERY_MS,
      );
      this.owedCallbacksTimer.unref();
    }
  }

  /** Stops taking jobs and waits up to `graceMs` for running ones; unfinished ones resume after a restart. */
  async close(graceMs = QUEUE_DRAIN_MS): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.owedCallbacksTimer) clearInterval(this.owedCallbacksTimer);
    this.owedCallbacksTimer = null;
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

  /** The id clients see of the stored run `runId` (see RunIds): in answers, callbacks and file names. */
  publicRunId(runId: number): number {
    return this.ids().toPublic(runId);
  }

  private ids(): RunIds {
    if (!this.runIds) throw new Error('the job queue is not started');
    return this.runIds;
  }

  /**
   * The stored run of a run id from a path or a GraphQL argument: a positive integer as the service
   * writes it, so that a run has one address (`01` is refused, not read as run 1). An id no run can
   * have is answered as an unknown run.
   */
  parseRunId(text: string): number {
    if (!RUN_ID_TEXT.test(text) || !Number.isSafeInteger(Number(text))) {
      const reason = /^0+[1-9]\d*$/.test(text)
        ? 'must be a positive integer without leading zeros'
        : 'must be a positive integer';
      throw badRequest([{ field: 'run_id', reason }]);
    }
    const stored = this.ids().toStored(Number(text));
    if (stored === null) throw notFound('run', text);
    return stored;
  }

  /**
   * Queues a run of a request that parseTierViewRequest has accepted, once its root
   * exists and its callback host is allowed; the id is durable and never reused.
   */
  async submit(request: TierViewRequest, caller: Caller = undefined): Promise<RunRecord> {
    return (await this.submitOnce(request, caller, null)).run;
  }

  /**
   * {@link submit} under the client's name for the request (its `Idempotency-Key`, checked by
   * {@link checkIdempotencyKey}): where the caller already started a run under that key, that run is
   * the answer (`replayed`), queued once, whatever its state now and whatever the quota; the same key
   * with another request is refused (IDEMPOTENCY_KEY_REUSED). A key names its run for as long as the
   * run is stored. Null: no key, a new run every time.
   */
  async submitOnce(
    request: TierViewRequest,
    caller: Caller,
    idempotencyKey: string | null,
  ): Promise<{ run: RunRecord; replayed: boolean }> {
    if (request.callback_url !== null) {
      const check = checkCallbackUrl(request.callback_url, this.o.callbacks.rules, {
        allowHttp: this.o.callbacks.allowHttp,
        publicOnly: this.o.callbacks.publicOnly,
      });
      if (!check.ok) {
        throw new AppError('BAD_REQUEST', `callback_url: ${check.reason}`, [
          { field: 'callback_url', reason: check.reason },
        ]);
      }
    }
    if (!(await this.o.store.companyExists(request.root_nodes)))
      throw notFound('company', request.root_nodes);
    const owner = caller ?? null;
    let run: RunRecord;
    try {
      run = await this.o.runs.create(request, this.now(), {
        ownerKeyId: owner,
        idempotencyKey,
        ...(caller !== undefined && this.o.maxActivePerKey !== undefined
          ? { maxActive: this.o.maxActivePerKey }
          : {}),
      });
    } catch (e) {
      if (e instanceof RunKeyTaken) {
        if (canonicalJson(effectiveRequest(e.run.request)) !== canonicalJson(effectiveRequest(request))) {
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            `The Idempotency-Key ${JSON.stringify(idempotencyKey)} started run ${this.publicRunId(e.run.runId)} with another ` +
              'request; a new request needs a new key (GET /v1/jobs/ lists the runs started).',
          );
        }
        return { run: e.run, replayed: true };
      }
      if (e instanceof RunQuotaExceeded) {
        throw new AppError(
          'TOO_MANY_RUNS',
          `This API key already has ${e.maxActive} runs pending or running, the most allowed at once ` +
            '(JOBS_MAX_QUEUED_PER_KEY); wait for one to end or cancel one.',
          [],
          RUN_SLOT_RETRY_S,
        );
      }
      throw e;
    }
    try {
      await this.agenda.now(TIERVIEW_JOB, TierViewJob.input(run.runId));
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
    return { run, replayed: false };
  }

  /** The run if the caller may see it: another key's run is answered as unknown (404), not forbidden. */
  private async visible(runId: number, caller: Caller): Promise<RunRecord> {
    const run = await this.o.runs.get(runId);
    if (!run || (caller !== undefined && (run.ownerKeyId === null || run.ownerKeyId !== caller))) {
      throw notFound('run', String(this.publicRunId(runId)));
    }
    return run;
  }

  /**
   * The run as clients see it; download links are signed afresh on every call, for `origin` (the
   * address the client reached this server by) where the blob store serves them itself.
   */
  async view(runId: number, caller: Caller = undefined, origin?: string): Promise<JobView> {
    return this.toView(await this.visible(runId, caller), origin);
  }

  /** The caller's runs, newest first. */
  async list(
    caller: string | null,
    page: { limit?: number | null; offset?: number | null },
    origin?: string,
  ): Promise<JobPage> {
    const { limit, offset } = check(this.pageSchema, {
      limit: page.limit ?? undefined,
      offset: page.offset ?? undefined,
    });
    if (caller === null) return { results: [], has_more: false };
    const runs = await this.o.runs.listByOwner(caller, limit + 1, offset);
    const results = await Promise.all(runs.slice(0, limit).map((r) => this.toView(r, origin)));
    return { results, has_more: runs.length > limit };
  }

  /** Cancels a pending or running run; a finished run is left as it is. */
  async cancel(runId: number, caller: Caller = undefined, origin?: string): Promise<JobView> {
    const now = this.now();
    const run = await this.visible(runId, caller);
    const canceled = await this.o.runs.transition(
      runId,
      ['PENDING'],
      {
        lifeCycleState: 'TERMINATED',
        resultState: 'CANCELED',
        userCancelledOrTimedout: true,
        stateMessage: 'canceled by the user before it started',
        endedAt: now,
        callbackDue: this.owesCallback(run.request),
      },
      now,
    );
    if (canceled) {
      // The queued job stays: removing it could pull it from under a worker that
      // has just locked it (an error there); started, it finds the run ended and stops.
      await this.notify(canceled);
      return this.toView(canceled, origin);
    }
    const flagged = await this.o.runs.transition(runId, ['RUNNING'], { cancelRequested: true }, now);
    // The worker holding the run may be this process (stop it now) or another (it polls the flag).
    this.tierview.cancel(runId);
    return this.toView(flagged ?? (await this.o.runs.get(runId)) ?? run, origin);
  }

  /** Whether runs here can never start: no worker in this process, and none elsewhere can reach the queue. */
  private unworked(): boolean {
    return !this.o.worker && this.o.shared === false;
  }

  private async toView(run: RunRecord, origin?: string): Promise<JobView> {
    const state: JobView['state'] = {
      life_cycle_state: run.lifeCycleState,
      state_message: run.stateMessage,
      user_cancelled_or_timedout: run.userCancelledOrTimedout,
    };
    if (run.resultState && (run.lifeCycleState === 'TERMINATED' || run.lifeCycleState === 'INTERNAL_ERROR')) {
      state.result_state = run.resultState;
    }
    const view: JobView = { run_id: String(this.publicRunId(run.runId)), state, output: null };
    if (run.lifeCycleState === 'PENDING') {
      const ahead = await this.o.runs.countPendingBefore(run.runId);
      const limit = `up to ${this.o.concurrency} ${this.o.concurrency === 1 ? 'run' : 'runs'} at once`;
      state.state_message =
        (ahead === 0
          ? `queued: next to start (${limit})`
          : `queued: ${fmt(ahead)} ${ahead === 1 ? 'run' : 'runs'} ahead (${limit})`) +
        (this.unworked() ? '; but no worker takes runs from this queue (JOBS_WORKER=false)' : '');
    } else if (run.lifeCycleState === 'RUNNING') {
      view.output = {};
      if (run.cancelRequested) state.state_message = `cancel requested; stopping (${run.stateMessage})`;
    } else if (run.resultState === 'SUCCESS' && run.files) {
      const expires = (run.endedAt ?? run.updatedAt).getTime() + this.o.retentionS * 1000;
      const left = expires - this.now().getTime();
      if (left <= 0) {
        // The files go at the next clean-up (every 10 minutes): expired, and no longer linked, from now.
        state.state_message = `the export files expired on ${new Date(expires).toISOString()} (EXPORT_RETENTION_S after the run ended); start a new run`;
      } else if (!(await this.stillStored(run))) {
        // Deleted before their time: by a clean-up while EXPORT_RETENTION_S was shorter, by a bucket's
        // lifecycle rule, or by hand. A link to them would only fail at download.
        state.state_message =
          'the export files are no longer stored (removed before EXPORT_RETENTION_S had passed: by an earlier, shorter retention, a storage rule or by hand); start a new run';
      } else {
        // No link outlives the files it points at.
        const ttl = Math.max(1, Math.min(this.o.downloadTtlS, Math.floor(left / 1000)));
        const links: Record<string, string> = {};
        for (const [k, key] of Object.entries(run.files)) {
          links[k] = await this.o.blobs.signedUrl(key, ttl, origin);
        }
        view.output = { result: JSON.stringify(links), truncated: false };
      }
    }
    return view;
  }

  /**
   * Whether every file of a successful run is still in the blob store. Where the store cannot say
   * (unreachable), the links are given as before and the download itself tells.
   */
  private async stillStored(run: RunRecord): Promise<boolean> {
    try {
      const kept = await Promise.all(Object.values(run.files ?? {}).map((key) => this.o.blobs.exists(key)));
      return kept.every(Boolean);
    } catch (e) {
      this.o.log.warn(
        { err: e, run_id: this.publicRunId(run.runId) },
        'could not tell whether the export files are kept',
      );
      return true;
    }
  }

  /** Whether a run of `request` is to be reported to a callback URL when it ends. */
  private owesCallback(request: TierViewRequest): boolean {
    return request.callback_url !== null && this.o.callbacks.sender !== null;
  }

  /**
   * Queues the completion callback an ended run owes, then clears its mark; a worker
   * delivers it, here or elsewhere. Should this process die before the mark is
   * cleared, a worker queues the delivery again later: receivers may therefore see a
   * delivery twice, always under the run's one delivery id.
   */
  private async notify(run: RunRecord): Promise<void> {
    if (!run.callbackDue) return;
    const url = run.request.callback_url;
    if (url && this.o.callbacks.sender) {
      try {
        await this.callbackJob.enqueue(this.agenda, run.runId, url, run.createdAt);
      } catch (e) {
        this.o.log.warn(
          { err: e, run_id: this.publicRunId(run.runId) },
          'callback not queued yet; a worker will queue it later',
        );
        return;
      }
    } else {
      this.o.log.warn({ run_id: this.publicRunId(run.runId) }, 'callback not sent: callbacks are off');
    }
    await this.o.runs
      .transition(run.runId, ENDED_STATES, { callbackDue: false }, this.now())
      .catch((e: unknown) =>
        this.o.log.warn({ err: e, run_id: this.publicRunId(run.runId) }, 'callback mark not cleared'),
      );
  }

  /** Queues the callbacks of ended runs marked as owing one for at least `minAgeMs`. */
  private async queueOwedCallbacks(minAgeMs: number): Promise<void> {
    try {
      const before = new Date(this.now().getTime() - minAgeMs);
      for (;;) {
        const owed = await this.o.runs.listCallbacksDue(before, 100);
        for (const run of owed) {
          if (!this.started) return;
          this.o.log.info(
            { run_id: this.publicRunId(run.runId) },
            'queuing a callback its run ended without',
          );
          await this.notify(run);
        }
        if (owed.length < 100) return;
      }
    } catch (e) {
      this.o.log.warn({ err: e }, 'could not look for callbacks owed');
    }
  }

  private async cleanup(): Promise<void> {
    const before = new Date(this.now().getTime() - this.o.retentionS * 1000);
    const n = await this.o.blobs.deleteOlderThan(before);
    if (n > 0) this.o.log.info({ files: n }, 'expired export files deleted');
  }
}

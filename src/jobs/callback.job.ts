/**
 * Delivery of one completion callback as a job of its own, in the same jobs
 * engine as the runs. Each attempt is one run of the job; a failed attempt
 * ends with the next attempt's time stored as the job's next run, so a restart
 * or a crash between attempts loses nothing, and a worker that died during an
 * attempt leaves a lock that lapses and lets another worker make it again. The
 * delivery id is derived from the run, and sent on every attempt.
 */
import { createHash } from 'node:crypto';
import type { Agenda, Job } from 'agenda';
import { z } from 'zod';
import type { HostRule } from '../domain/callback-hosts';
import { MAX_CALLBACK_URL_LENGTH, checkCallbackUrl } from '../domain/callback-hosts';
import type { Logger } from '../logger';
import type { CallbackSender } from './callbacks';
import { describeError, urlForLog } from './callbacks';

export const CALLBACK_JOB = 'callback';

/** Deliveries one worker makes at once. */
export const CALLBACK_CONCURRENCY = 4;

const inputSchema = z.object({
  run_id: z.number().int().positive(),
  url: z.string().min(1).max(MAX_CALLBACK_URL_LENGTH),
  delivery_id: z.uuid(),
});

/** What a queued delivery stores: which run to report, where, and under which delivery id. */
export type CallbackJobInput = z.infer<typeof inputSchema>;

/** The stored input of a job, or null when it is not one this version can deliver. */
export function parseCallbackJobInput(data: unknown): CallbackJobInput | null {
  const parsed = inputSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

export interface CallbackJobOptions {
  /** Null when callbacks are off; deliveries queued earlier are then dropped with a warning. */
  sender: CallbackSender | null;
  /** The allow-list as configured now: a URL accepted at submission must still pass it. */
  rules: HostRule[];
  allowHttp: boolean;
  /** Refuse IP addresses in URLs that are not public (the sender checks the addresses of names). */
  publicOnly?: boolean;
  /**
   * The body to post for a run as it is at the time of the attempt, and the id of the API key that
   * started it (whose callback secret signs it too; null for none); null when the run is gone.
   */
  payload: (runId: number) => Promise<{ body: object; keyId: string | null } | null>;
  /** The id clients see of a stored run (JobQueue.publicRunId), for the log. */
  publicRunId: (runId: number) => number;
  log: Logger;
}

/**
 * The delivery id of a run's callback: derived from the run, so a delivery queued
 * twice (its process died before recording that it was queued) carries the same
 * id, and a receiver can tell the repeat. A UUID in form (version 8, for ids whose
 * bits the application chooses), from a hash of the run's id as clients see it
 * (`publicRunId`) and its creation time: from the stored number, a receiver that
 * knows roughly when it started a run could search its way back to that number.
 */
export function callbackDeliveryId(publicRunId: number, createdAt: Date): string {
  const h = createHash('sha256')
    .update(`tiergraph-callback:${publicRunId}:${createdAt.toISOString()}`)
    .digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Thrown by an attempt that should be made again after `delayMs`; Agenda stores the time. */
class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

/** The callback job: queued by {@link CallbackJob.enqueue}, run by the workers that {@link CallbackJob.define} it. */
export class CallbackJob {
  constructor(private readonly o: CallbackJobOptions) {}

  /** Registers the job with a worker's Agenda. */
  define(agenda: Agenda): void {
    const timeoutMs = this.o.sender?.timeoutMs ?? 10_000;
    agenda.define(CALLBACK_JOB, (job: Job<unknown>) => this.perform(job), {
      concurrency: CALLBACK_CONCURRENCY,
      // Longer than any attempt, so a live attempt keeps its lock; short enough that one lost in a crash is soon remade.
      lockLifetime: 2 * timeoutMs + 5000,
      // The attempt decided the wait; anything else thrown is not worth another attempt.
      backoff: ({ error }) => (error instanceof RetryLater ? error.delayMs : null),
      removeOnComplete: true,
    });
  }

  /** Queues the delivery of the callback of the run `runId` created at `createdAt` to `url`. */
  async enqueue(agenda: Agenda, runId: number, url: string, createdAt: Date): Promise<CallbackJobInput> {
    const input: CallbackJobInput = {
      run_id: runId,
      url,
      delivery_id: callbackDeliveryId(this.o.publicRunId(runId), createdAt),
    };
    await agenda.now(CALLBACK_JOB, input);
    return input;
  }

  /**
   * One attempt. Returns when the delivery is over (delivered, refused, given
   * up, or impossible); throws {@link RetryLater} when another attempt is due.
   * Nothing here is an error of the service: a receiver that stays down is
   * reported as a warning.
   */
  async perform(job: Job<unknown>): Promise<void> {
    const input = parseCallbackJobInput(job.attrs.data);
    if (!input) {
      this.o.log.warn({ job: String(job.attrs._id) }, 'callback job with unreadable data dropped');
      return;
    }
    const attempt = (job.attrs.failCount ?? 0) + 1;
    const check = checkCallbackUrl(input.url, this.o.rules, {
      allowHttp: this.o.allowHttp,
      publicOnly: this.o.publicOnly,
    });
    const fields = {
      run_id: this.o.publicRunId(input.run_id),
      deliveryId: input.delivery_id,
      url: check.ok ? urlForLog(check.url) : undefined,
      attempts: attempt,
    };
    const sender = this.o.sender;
    if (!check.ok || !sender) {
      this.o.log.warn({ ...fields, err: check.ok ? 'callbacks are off' : check.reason }, 'callback not sent');
      return;
    }
    const giveUpOr = (error: string, delayMs: number, status: number | null = null): void => {
      if (attempt >= sender.maxAttempts) {
        this.o.log.warn({ ...fields, status, err: error }, 'callback not delivered; giving up');
        return;
      }
      this.o.log.info({ ...fields, status, err: error, delayMs }, 'callback attempt failed; retrying');
      throw new RetryLater(error, delayMs);
    };

    let body: string;
    let keyId: string | null;
    try {
      const payload = await this.o.payload(input.run_id);
      if (payload === null) {
        this.o.log.warn(fields, 'callback not sent: the run no longer exists, or its API key was revoked');
        return;
      }
      body = JSON.stringify(payload.body);
      keyId = payload.keyId;
    } catch (e) {
      // The run store or blob store being briefly unreachable is worth another attempt.
      return giveUpOr(
        `could not build the notification: ${describeError(e)}`,
        sender.retryDelayMs(attempt, null),
      );
    }

    const outcome = await sender.attempt(check.url, body, input.delivery_id, keyId);
    if (outcome.kind === 'delivered') {
      this.o.log.info({ ...fields, status: outcome.status }, 'callback delivered');
      return;
    }
    if (outcome.kind === 'refused') {
      this.o.log.warn(
        { ...fields, status: outcome.status, err: outcome.error },
        outcome.status === null
          ? 'callback not sent: its host resolves to an address callbacks may not reach'
          : 'callback refused by receiver; not retrying',
      );
      return;
    }
    return giveUpOr(outcome.error, sender.retryDelayMs(attempt, outcome.retryAfterMs), outcome.status);
  }
}

/**
 * Completion callbacks of tier-view export jobs. A client that passes
 * `callback_url` when it starts a job gets one signed POST when the run ends,
 * instead of polling `run_id`. Which URLs are acceptable is decided in
 * `domain/callback-hosts.ts`; two concerns live here:
 *
 * - how a receiver knows the notification is genuine and fresh: an HMAC over
 *   a timestamp and the body;
 * - how delivery copes with a receiver that is briefly down: bounded retries
 *   with backoff, stoppable at shutdown.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/** Request header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const CALLBACK_SIGNATURE_HEADER = 'Tiergraph-Signature';

/**
 * Request header carrying the delivery id: the same on every attempt of one
 * delivery, so a receiver that got an attempt whose response was lost can
 * recognise the retry and skip it.
 */
export const CALLBACK_DELIVERY_HEADER = 'Tiergraph-Delivery';

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * Computes the value of the {@link CALLBACK_SIGNATURE_HEADER} header:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The timestamp is
 * part of the signed text so a captured request cannot be replayed later
 * with a fresh timestamp.
 *
 * @param timestamp Unix time in seconds (fractions are dropped).
 * @param body The exact request body bytes as a string, before any parsing.
 */
export function signCallback(secret: string, timestamp: number, body: string): string {
  const t = Math.floor(timestamp);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

/**
 * Checks a {@link CALLBACK_SIGNATURE_HEADER} value the way a receiver should:
 * the timestamp must be within `toleranceSeconds` of `nowSeconds` (either
 * direction, to allow for clock skew) and one `v1` signature must equal the
 * HMAC of `"<t>.<body>"`, compared in constant time. Several `v1` entries are
 * accepted so a sender may sign with an old and a new secret during rotation.
 *
 * @param body The raw request body as received, not re-serialised JSON.
 */
export function verifyCallbackSignature(
  secret: string,
  header: string,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,15}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  if (timestamp === null || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  // Every candidate is compared (no early exit), and each has the fixed length checked above.
  let valid = false;
  for (const signature of signatures) {
    if (timingSafeEqual(Buffer.from(signature, 'hex'), expected)) valid = true;
  }
  return valid;
}

/** Logger subset the sender needs (pino's Logger satisfies it). */
export interface CallbackLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Options of {@link CallbackSender}. */
export interface CallbackSenderOptions {
  /** HMAC key for {@link signCallback}; receivers verify with the same value. */
  secret: string;
  /** Attempts per delivery, the first included (default 6). */
  maxAttempts?: number;
  /** Backoff scale: attempt n waits up to baseDelayMs * 2^(n-1) (default 1 s). */
  baseDelayMs?: number;
  /** Upper bound of any wait between attempts, Retry-After included (default 5 min). */
  maxDelayMs?: number;
  /** Time allowed for one attempt to get response headers (default 10 s). */
  timeoutMs?: number;
  /** HTTP client; the global fetch when omitted. */
  fetch?: typeof fetch;
  log?: CallbackLog;
  /** Waits between attempts; must return early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Outcome of {@link CallbackSender.deliver}. */
export interface CallbackDeliveryResult {
  /** A 2xx response was received. */
  delivered: boolean;
  /** Requests made (0 when the sender was stopped before the first). */
  attempts: number;
  /** HTTP status of the last attempt; null when it got no response. */
  lastStatus: number | null;
  /** Why the last attempt failed; null when delivered. */
  lastError: string | null;
}

const DEFAULT_MAX_ATTEMPTS = 6;
const DEFAULT_BASE_DELAY_MS = 1000;
const DEFAULT_MAX_DELAY_MS = 5 * 60 * 1000;
const DEFAULT_TIMEOUT_MS = 10 * 1000;

// 408 Request Timeout, 409 Conflict, 425 Too Early and 429 Too Many Requests
// describe a passing condition on the receiver's side, unlike other 4xx.
const RETRYABLE_4XX = new Set([408, 409, 425, 429]);

const noopLog: CallbackLog = { info: () => undefined, warn: () => undefined };

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    // Not unref'd: a pending retry is work the process should finish unless close() is called.
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Milliseconds a Retry-After value asks for (delta-seconds or an HTTP date),
 * or null when absent or unreadable.
 */
function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

// Query strings of callback URLs may carry the receiver's own tokens; logs get the rest.
function urlForLog(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function describeError(error: unknown): string {
  // Duck-typed rather than `instanceof Error`: fetch's errors may come from another realm (vm, test sandboxes).
  const { message, cause } = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    cause?: unknown;
  };
  // fetch reports network failures as TypeError('fetch failed') with the system error as cause;
  // a connection failure to several addresses is an AggregateError with only a `code`.
  if (typeof cause === 'object' && cause !== null) {
    const { message: causeMessage, code } = cause as { message?: unknown; code?: unknown };
    if (typeof causeMessage === 'string' && causeMessage !== '') return causeMessage;
    if (typeof code === 'string') return code;
  }
  if (typeof message === 'string' && message !== '') return message;
  return String(error);
}

class AttemptTimeout extends Error {
  constructor(ms: number) {
    super(`no response within ${ms} ms`);
    this.name = 'AttemptTimeout';
  }
}

type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'permanent'; status: number; error: string }
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs: number | null }
  | { kind: 'stopped' };

/**
 * Posts completion notifications to callback URLs. One instance serves the
 * whole process; {@link CallbackSender.close} stops every pending delivery
 * at shutdown. URLs are expected to have passed {@link checkCallbackUrl}.
 */
export class CallbackSender {
  private readonly secret: string;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly log: CallbackLog;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly closing = new AbortController();
  private readonly pending = new Set<Promise<CallbackDeliveryResult>>();

  constructor(options: CallbackSenderOptions) {
    if (options.secret === '') throw new Error('CallbackSender needs a non-empty secret');
    this.secret = options.secret;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
    this.baseDelayMs = Math.max(0, options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS);
    this.maxDelayMs = Math.max(0, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
    this.timeoutMs = Math.max(1, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.fetchFn = options.fetch ?? fetch;
    this.log = options.log ?? noopLog;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /**
   * Sends `payload` as JSON to `url`, retrying transient failures, and
   * resolves with the outcome. Never rejects: a receiver that is down is the
   * receiver's problem, not the job's, so failures are logged and reported in
   * the result only.
   *
   * Retried: network errors, timeouts, 5xx, 408, 409, 425 and 429, with
   * exponential backoff and full jitter, or the server's Retry-After when
   * given (capped by maxDelayMs). Final: 2xx (delivered), any other 4xx, and
   * 3xx, since following a redirect could lead outside the allow-list.
   *
   * @param signal aborts pending and future attempts of this delivery.
   */
  deliver(url: URL, payload: object, signal?: AbortSignal): Promise<CallbackDeliveryResult> {
    const run = this.run(url, payload, signal);
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return run;
  }

  /**
   * Stops all pending deliveries (in-flight requests are aborted, waits end)
   * and refuses new ones; resolves once every delivery has settled.
   */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.all([...this.pending]);
  }

  private async run(url: URL, payload: object, signal?: AbortSignal): Promise<CallbackDeliveryResult> {
    const deliveryId = randomUUID();
    const logFields = { url: urlForLog(url), deliveryId };
    const result: CallbackDeliveryResult = {
      delivered: false,
      attempts: 0,
      lastStatus: null,
      lastError: null,
    };

    // One signal for "stop this delivery": the sender closing or the caller aborting.
    const stop = new AbortController();
    const onStop = (): void => stop.abort();
    this.closing.signal.addEventListener('abort', onStop, { once: true });
    signal?.addEventListener('abort', onStop, { once: true });
    if (this.closing.signal.aborted || signal?.aborted) stop.abort();

    try {
      let body: string;
      try {
        body = JSON.stringify(payload);
      } catch (error) {
        result.lastError = `payload is not serialisable: ${describeError(error)}`;
        this.log.warn({ ...logFields, err: result.lastError }, 'callback not sent');
        return result;
      }

      while (result.attempts < this.maxAttempts) {
        if (stop.signal.aborted) return this.stopped(result, logFields);
        result.attempts += 1;
        const outcome = await this.attempt(url, body, deliveryId, stop.signal);
        if (outcome.kind === 'stopped') {
          result.lastStatus = null;
          return this.stopped(result, logFields);
        }
        result.lastStatus = outcome.status;
        if (outcome.kind === 'delivered') {
          result.delivered = true;
          result.lastError = null;
          this.log.info(
            { ...logFields, attempts: result.attempts, status: outcome.status },
            'callback delivered',
          );
          return result;
        }
        result.lastError = outcome.error;
        if (outcome.kind === 'permanent') {
          this.log.warn(
            { ...logFields, attempts: result.attempts, status: outcome.status, err: outcome.error },
            'callback refused by receiver; not retrying',
          );
          return result;
        }
        if (result.attempts >= this.maxAttempts) break;
        const delayMs = this.delayBeforeRetry(result.attempts, outcome.retryAfterMs);
        this.log.info(
          { ...logFields, attempts: result.attempts, status: outcome.status, err: outcome.error, delayMs },
          'callback attempt failed; retrying',
        );
        await this.sleep(delayMs, stop.signal);
      }
      this.log.warn(
        { ...logFields, attempts: result.attempts, status: result.lastStatus, err: result.lastError },
        'callback not delivered; giving up',
      );
      return result;
    } catch (error) {
      // Only an injected fetch or sleep misbehaving gets here; the contract is still to resolve.
      result.lastError = describeError(error);
      this.log.warn(
        { ...logFields, attempts: result.attempts, err: result.lastError },
        'callback delivery failed',
      );
      return result;
    } finally {
      this.closing.signal.removeEventListener('abort', onStop);
      signal?.removeEventListener('abort', onStop);
    }
  }

  private stopped(result: CallbackDeliveryResult, logFields: object): CallbackDeliveryResult {
    result.lastError = 'delivery stopped before it succeeded';
    this.log.warn({ ...logFields, attempts: result.attempts }, 'callback delivery stopped');
    return result;
  }

  /**
   * Wait before attempt `failed + 1`. Full jitter (uniform between zero and
   * the exponential bound) spreads out the retries of many jobs that failed
   * against the same receiver at the same moment.
   */
  private delayBeforeRetry(failed: number, requestedMs: number | null): number {
    if (requestedMs !== null) return Math.min(this.maxDelayMs, requestedMs);
    const bound = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (failed - 1));
    return Math.floor(Math.random() * bound);
  }

  private async attempt(
    url: URL,
    body: string,
    deliveryId: string,
    stop: AbortSignal,
  ): Promise<AttemptOutcome> {
    const controller = new AbortController();
    const onStop = (): void => controller.abort();
    stop.addEventListener('abort', onStop, { once: true });
    const timer = setTimeout(() => controller.abort(new AttemptTimeout(this.timeoutMs)), this.timeoutMs);
    try {
      const response = await this.fetchFn(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'tiergraph',
          // Signed per attempt: a retry minutes later must still pass the receiver's freshness check.
          [CALLBACK_SIGNATURE_HEADER]: signCallback(this.secret, Date.now() / 1000, body),
          [CALLBACK_DELIVERY_HEADER]: deliveryId,
        },
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
      // The receiver's answer body is of no use; cancelling frees the connection without reading it.
      await response.body?.cancel().catch(() => undefined);
      const status = response.status;
      if (status >= 200 && status < 300) return { kind: 'delivered', status };
      if (status >= 500 || RETRYABLE_4XX.has(status)) {
        return {
          kind: 'retry',
          status,
          error: `HTTP ${status}`,
          retryAfterMs: retryAfterMs(response.headers.get('retry-after'), Date.now()),
        };
      }
      if (status >= 300 && status < 400) {
        return { kind: 'permanent', status, error: `HTTP ${status} redirect not followed` };
      }
      return { kind: 'permanent', status, error: `HTTP ${status}` };
    } catch (error) {
      if (stop.aborted) return { kind: 'stopped' };
      const reason: unknown = controller.signal.reason;
      if (controller.signal.aborted && reason instanceof AttemptTimeout) {
        return { kind: 'retry', status: null, error: reason.message, retryAfterMs: null };
      }
      return { kind: 'retry', status: null, error: describeError(error), retryAfterMs: null };
    } finally {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    }
  }
}

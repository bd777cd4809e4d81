/**
 * Completion callbacks of tier-view export jobs. A client that passes
 * `callback_url` when it starts a job gets one signed POST when the run ends,
 * instead of polling `run_id`. Which URLs are acceptable is decided in
 * `domain/callback-hosts.ts`; two concerns live here:
 *
 * - how a receiver knows the notification is genuine and fresh: an HMAC over
 *   a timestamp and the body;
 * - one delivery attempt and what its outcome means (delivered, refused,
 *   worth retrying), and the schedule of retries. The attempts themselves are
 *   queued as jobs (`callback.job.ts`), so a retry survives a restart.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { bareHost } from '../domain/hosts';

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
 * The callback secret of one API key: derived from the server's `CALLBACK_SECRET` and the key's id,
 * so every instance sharing that secret derives the same one, and nothing is stored. A tenant given
 * its key's secret (`tiergraph keys callback-secret ID`) verifies its callbacks without holding the
 * server's, which would let it sign callbacks for any other tenant's receiver; from its own it can
 * work out neither the server's nor another key's.
 */
export function keyCallbackSecret(serverSecret: string, keyId: string): string {
  return createHmac('sha256', serverSecret)
    .update(`tiergraph callback secret of key ${keyId}`)
    .digest('base64url');
}

/**
 * Computes the value of the {@link CALLBACK_SIGNATURE_HEADER} header:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1` per secret
 * (a receiver accepts the notification when one of them verifies with its
 * own). The timestamp is part of the signed text so a captured request cannot
 * be replayed later with a fresh timestamp.
 *
 * @param secrets One secret, or several: the run's key's (keyCallbackSecret), then the server's.
 * @param timestamp Unix time in seconds (fractions are dropped).
 * @param body The exact request body bytes as a string, before any parsing.
 */
export function signCallback(secrets: string | readonly string[], timestamp: number, body: string): string {
  const t = Math.floor(timestamp);
  const all = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${t}`, ...all.map((secret) => `v1=${hmacHex(secret, t, body)}`)].join(',');
}

/**
 * Checks a {@link CALLBACK_SIGNATURE_HEADER} value the way a receiver should:
 * the timestamp must be within `toleranceSeconds` of `nowSeconds` (either
 * direction, to allow for clock skew) and one `v1` signature must equal the
 * HMAC of `"<t>.<body>"`, compared in constant time. Several `v1` entries are
 * accepted: a run's callback carries one per secret (its key's and the
 * server's), and a sender may sign with an old and a new secret during rotation.
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

/** Options of {@link CallbackSender}. */
export interface CallbackSenderOptions {
  /**
   * HMAC key for {@link signCallback}: the server's `CALLBACK_SECRET`. A run started with an API key
   * is signed with that key's secret too (keyCallbackSecret); receivers verify with either.
   */
  secret: string;
  /** Attempts per delivery, the first included (default 10). */
  maxAttempts?: number;
  /** Backoff scale: the wait after failed attempt n is bounded by baseDelayMs * 2^(n-1) (default 10 s). */
  baseDelayMs?: number;
  /** Upper bound of any wait between attempts, Retry-After included (default 1 h). */
  maxDelayMs?: number;
  /** Time allowed for one attempt to get response headers (default 10 s). */
  timeoutMs?: number;
  /** HTTP client; the global fetch when omitted (see `addresses`). */
  fetch?: typeof fetch;
  /**
   * Which addresses a receiver's host may resolve to. When given, each attempt resolves the host itself,
   * refuses the delivery when any address fails the test, and connects to an address it checked, so a
   * name cannot resolve one way for the check and another for the connection. All when omitted.
   */
  addresses?: (ip: string) => boolean;
  /** Source of jitter in [0, 1); Math.random when omitted. */
  random?: () => number;
}

/** Outcome of one {@link CallbackSender.attempt}. */
export type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  /**
   * The receiver answered in a way a retry cannot change (4xx other than the passing ones, 3xx), or its
   * host resolved to an address callbacks may not reach (status null).
   */
  | { kind: 'refused'; status: number | null; error: string }
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs: number | null };

const DEFAULT_MAX_ATTEMPTS = 10;
const DEFAULT_BASE_DELAY_MS = 10 * 1000;
const DEFAULT_MAX_DELAY_MS = 60 * 60 * 1000;
const DEFAULT_TIMEOUT_MS = 10 * 1000;

// 408 Request Timeout, 409 Conflict, 425 Too Early and 429 Too Many Requests
// describe a passing condition on the receiver's side, unlike other 4xx.
const RETRYABLE_4XX = new Set([408, 409, 425, 429]);

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

/** Query strings of callback URLs may carry the receiver's own tokens; logs get the rest. */
export function urlForLog(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** One line for a log: the system error behind a failed fetch where there is one. */
export function describeError(error: unknown): string {
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

/** A receiver's address that {@link CallbackSenderOptions.addresses} refused. */
class AddressRefused extends Error {
  constructor(host: string, address: string) {
    super(
      host === address
        ? `${address} is an address callbacks may not reach on this server`
        : `${host} resolves to ${address}, which callbacks may not reach on this server`,
    );
    this.name = 'AddressRefused';
  }
}

/**
 * A fetch for callbacks that reaches only addresses `allowed` accepts: node's HTTP client with a lookup
 * that checks every address a name resolves to, and a check of an address written in the URL. Enough of
 * fetch for {@link CallbackSender.attempt}: a POST with a text body, and the answer's status and headers
 * (as a plain object: a Response could not hold a status such as 699, which a receiver may send).
 */
function checkedFetch(allowed: (ip: string) => boolean): typeof fetch {
  const lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.find((a) => !allowed(a.address));
      if (refused) return callback(new AddressRefused(hostname, refused.address), '', 0);
      if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const post = (url: URL, init: RequestInit): Promise<Response> =>
    new Promise((resolve, reject) => {
      const host = bareHost(url.hostname);
      if (isIP(host) !== 0 && !allowed(host)) return reject(new AddressRefused(host, host));
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(
        url,
        {
          method: init.method,
          headers: init.headers as Record<string, string>,
          signal: init.signal ?? undefined,
          lookup,
        },
        (response) => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const v of Array.isArray(value) ? value : [value])
              if (v !== undefined) headers.append(name, v);
          }
          // The body is of no use (see attempt): the connection is closed without reading it, so that a
          // receiver sending one without end holds nothing open.
          response.destroy();
          resolve({ status: response.statusCode ?? 0, headers, body: null } as unknown as Response);
        },
      );
      request.on('error', reject);
      request.end(init.body as string);
    });
  return ((url: URL, init: RequestInit) => post(url, init)) as typeof fetch;
}

class AttemptTimeout extends Error {
  constructor(ms: number) {
    super(`no response within ${ms} ms`);
    this.name = 'AttemptTimeout';
  }
}

/**
 * Posts signed completion notifications, one attempt at a time, and says how
 * long to wait before the next. One instance serves the whole process;
 * {@link CallbackSender.close} aborts attempts in flight at shutdown. URLs are
 * expected to have passed `checkCallbackUrl`.
 */
export class CallbackSender {
  /** Attempts per delivery, the first included. */
  readonly maxAttempts: number;
  /** Time allowed for one attempt to get response headers. */
  readonly timeoutMs: number;
  private readonly secret: string;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly random: () => number;
  private readonly closing = new AbortController();

  constructor(options: CallbackSenderOptions) {
    if (options.secret === '') throw new Error('CallbackSender needs a non-empty secret');
    this.secret = options.secret;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
    this.baseDelayMs = Math.max(0, options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS);
    this.maxDelayMs = Math.max(0, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
    this.timeoutMs = Math.max(1, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.fetchFn = options.fetch ?? (options.addresses ? checkedFetch(options.addresses) : fetch);
    this.random = options.random ?? Math.random;
  }

  /** Aborts attempts in flight; later attempts fail at once as retryable. */
  close(): Promise<void> {
    this.closing.abort();
    return Promise.resolve();
  }

  /**
   * Wait before attempt `failed + 1`: the receiver's Retry-After when it gave
   * one, otherwise an exponential bound (baseDelayMs doubling per failure) of
   * which a random half is waited on top of the other half. The jitter spreads
   * the retries of many runs that failed against one receiver at the same
   * moment; the fixed half keeps a receiver that is down from being hit again
   * at once. Both are capped by maxDelayMs.
   */
  retryDelayMs(failed: number, requestedMs: number | null): number {
    if (requestedMs !== null) return Math.min(this.maxDelayMs, requestedMs);
    const bound = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.max(0, failed - 1));
    return Math.floor(bound / 2 + (this.random() * bound) / 2);
  }

  /**
   * One POST of `body` (JSON text) to `url`, signed now with the server's secret and, for a run
   * started with an API key, with `keyId`'s (keyCallbackSecret), carrying `deliveryId`.
   * Never rejects.
   *
   * Retry: network errors, timeouts, 5xx, 408, 409, 425 and 429 (with the
   * server's Retry-After when given). Refused: any other 4xx, and 3xx, since
   * following a redirect could lead outside the allow-list.
   */
  async attempt(
    url: URL,
    body: string,
    deliveryId: string,
    keyId: string | null = null,
  ): Promise<AttemptOutcome> {
    const controller = new AbortController();
    const onClose = (): void => controller.abort(new Error('the server is shutting down'));
    if (this.closing.signal.aborted) onClose();
    else this.closing.signal.addEventListener('abort', onClose, { once: true });
    const timer = setTimeout(() => controller.abort(new AttemptTimeout(this.timeoutMs)), this.timeoutMs);
    try {
      const response = await this.fetchFn(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'tiergraph',
          // Signed per attempt: a retry minutes later must still pass the receiver's freshness check.
          // The server's last: a receiver that reads only the last v1 goes on verifying with it.
          [CALLBACK_SIGNATURE_HEADER]: signCallback(
            keyId === null ? this.secret : [keyCallbackSecret(this.secret, keyId), this.secret],
            Date.now() / 1000,
            body,
          ),
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
        return { kind: 'refused', status, error: `HTTP ${status} redirect not followed` };
      }
      return { kind: 'refused', status, error: `HTTP ${status}` };
    } catch (error) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
      if (reason instanceof AddressRefused) return { kind: 'refused', status: null, error: reason.message };
      return { kind: 'retry', status: null, error: describeError(reason), retryAfterMs: null };
    } finally {
      clearTimeout(timer);
      this.closing.signal.removeEventListener('abort', onClose);
    }
  }
}

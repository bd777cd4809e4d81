import crypto from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Store } from 'express-rate-limit';
import { FixedWindows } from './fixed-windows';
import type { CountWindow } from './fixed-windows';

export interface KeyRateLimitOptions {
  windowS: number;
  max: number;
  /** Counters shared between instances (Redis); none: counters in this process. */
  store?: Store;
  /** Answers a request over the limit; the rate-limit headers and Retry-After are already set. */
  onLimited: (req: Request, res: Response) => void;
  /**
   * The shared counters failed (Redis out of reach): the request goes on, not limited, and this is
   * told. Limits guard the service; losing them for a while must not take the API down with them.
   */
  onStoreError?: (err: unknown) => void;
  /** express-rate-limit's warnings about its own settings (it finds them odd), for the server's log. */
  onWarning?: (err: unknown) => void;
}

/**
 * Requests per API key in fixed windows (a key's window starts at its first
 * request), with the IETF draft-8 `RateLimit` and `RateLimit-Policy` headers on
 * every answer and `Retry-After` on a 429. Runs after authentication, so the key
 * id is always there.
 *
 * With a shared store the counting is express-rate-limit's. Without one the
 * counters live in a Map here, checked synchronously: express-rate-limit's
 * middleware awaits a chain of promises per request even over its in-memory
 * store, which cost about a tenth of the profile route's request rate at 1M
 * companies with the read cache off (bench/README.md). Both forms send the same
 * headers; `test/unit/key-rate-limit.test.ts` compares them request by request.
 */
export function keyRateLimit(o: KeyRateLimitOptions): RequestHandler {
  const windowMs = o.windowS * 1000;
  const keyOf = (req: Request) => req.keyId ?? 'anonymous';
  if (o.store) {
    return rateLimit({
      windowMs,
      limit: o.max,
      store: o.store,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      keyGenerator: keyOf,
      handler: (req, res) => o.onLimited(req, res),
      passOnStoreError: true,
      // Its errors are the store's; its warnings are about its settings.
      logger: { error: (err) => o.onStoreError?.(err), warn: (err) => o.onWarning?.(err) },
    });
  }
  const policyName = `"${o.max}-in-${durationName(o.windowS)}"`;
  const policyOf = (key: string) =>
    `${policyName}; q=${o.max}; w=${Math.ceil(o.windowS)}; pk=:${partitionKey(key)}:`;
  const windows = new FixedWindows<KeyWindow>(windowMs, (key, resetAt) => ({
    hits: 0,
    resetAt,
    policy: policyOf(key),
  }));
  return (req, res, next) => {
    const now = Date.now();
    const w = windows.hit(keyOf(req), now);
    const resetS = Math.max(0, Math.ceil((w.resetAt - now) / 1000));
    // Set rather than appended: no earlier handler sends them, and express's append reads the header back first.
    res.setHeader('RateLimit', `${policyName}; r=${Math.max(o.max - w.hits, 0)}; t=${resetS}`);
    res.setHeader('RateLimit-Policy', w.policy);
    if (w.hits > o.max) {
      res.setHeader('Retry-After', String(resetS));
      o.onLimited(req, res);
      return;
    }
    next();
  };
}

/** The window's length as the policy name gives it: `60sec` below a minute, then min, hr(s), day(s). */
export function durationName(windowS: number): string {
  if (windowS < 60) return `${windowS}sec`;
  const minutes = windowS / 60;
  if (minutes < 60) return `${minutes}min`;
  const hours = minutes / 60;
  if (hours < 24) return `${hours}hr${hours > 1 ? 's' : ''}`;
  const days = hours / 24;
  return `${days}day${days > 1 ? 's' : ''}`;
}

interface KeyWindow extends CountWindow {
  /** The key's `RateLimit-Policy` header, made when its entry is and kept while the entry lives. */
  policy: string;
}

/**
 * The policy's partition key, which names the key without revealing it: the first 12 hex digits of
 * its SHA-256, base64-encoded (as express-rate-limit sends it).
 */
function partitionKey(key: string): string {
  const hex = crypto.createHash('sha256').update(key).digest('hex').slice(0, 12);
  return Buffer.from(hex).toString('base64');
}

import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Options, Store } from 'express-rate-limit';
import { logAtMostEvery } from '../logger';
import type { Logger } from '../logger';
import { FixedWindows } from './fixed-windows';

export interface AuthFailureLimitOptions {
  /** Failed authentications an address may make per window; beyond, every request from it is refused. */
  max: number;
  windowS: number;
  /** Shared counters (Redis) for several instances; unset: this process's memory. */
  store?: Store;
}

export type AuthFailureCheck = { blocked: false } | { blocked: true; retryAfterS: number };

const NOT_BLOCKED: AuthFailureCheck = { blocked: false };

/**
 * Counts failed authentications per client address (IPv6 by /56, as a host
 * usually holds a whole prefix) so that keys cannot be guessed at request rate.
 * Once an address is over the limit all its requests are refused, a valid key
 * included: answering a right guess differently would tell the guesser.
 */
export class AuthFailureLimiter {
  /** Shared counters, or null when they are `local`. */
  private readonly store: Store | null;
  /**
   * This process's counters, read synchronously: with no failure counted lately (the usual case)
   * a request costs one size check, not a promise and the parsing of its address.
   */
  private readonly local: FixedWindows;
  /** While the shared counters are out of reach every request fails on them: a line a minute says so. */
  private readonly unavailable: (err: unknown, msg: string) => void;

  constructor(
    private readonly o: AuthFailureLimitOptions,
    private readonly log: Logger,
  ) {
    this.local = new FixedWindows(o.windowS * 1000, (_key, resetAt) => ({ hits: 0, resetAt }));
    this.unavailable = logAtMostEvery(60_000, log);
    this.store = o.store ?? null;
    if (!this.store) return;
    void Promise.resolve(this.store.init?.({ windowMs: o.windowS * 1000 } as Options)).catch(
      (err: unknown) => {
        this.log.warn({ err }, 'failed-authentication counter store did not start');
      },
    );
  }

  get max(): number {
    return this.o.max;
  }

  get windowS(): number {
    return this.o.windowS;
  }

  /** Whether the request's address is refused; synchronous unless the counters are shared. */
  check(req: Request): AuthFailureCheck | Promise<AuthFailureCheck> {
    if (this.store) return this.checkShared(this.store, req);
    if (this.local.empty) return NOT_BLOCKED;
    const now = Date.now();
    const w = this.local.peek(addressOf(req), now);
    if (!w || w.hits < this.o.max) return NOT_BLOCKED;
    return { blocked: true, retryAfterS: Math.max(1, Math.ceil((w.resetAt - now) / 1000)) };
  }

  private async checkShared(store: Store, req: Request): Promise<AuthFailureCheck> {
    try {
      const info = await store.get?.(addressOf(req));
      // rate-limit-redis reports an address it has never seen as NaN hits.
      if (!info || !(info.totalHits >= this.o.max)) return NOT_BLOCKED;
      const resetMs = info.resetTime ? info.resetTime.getTime() - Date.now() : this.o.windowS * 1000;
      return { blocked: true, retryAfterS: Math.max(1, Math.ceil(resetMs / 1000)) };
    } catch (err) {
      // The counters guard against guessing; losing them for a while must not take the API down with them.
      this.unavailable(err, 'failed-authentication counters unavailable; not limiting');
      return NOT_BLOCKED;
    }
  }

  async recordFailure(req: Request): Promise<void> {
    if (!this.store) {
      this.local.hit(addressOf(req), Date.now());
      return;
    }
    try {
      await this.store.increment(addressOf(req));
    } catch (err) {
      this.unavailable(err, 'failed-authentication counters unavailable; not counted');
    }
  }

  async close(): Promise<void> {
    await this.store?.shutdown?.();
  }
}

function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

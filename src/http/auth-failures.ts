import type { Request } from 'express';
import { ipKeyGenerator, MemoryStore } from 'express-rate-limit';
import type { Options, Store } from 'express-rate-limit';
import type { Logger } from '../logger';

export interface AuthFailureLimitOptions {
  /** Failed authentications an address may make per window; beyond, every request from it is refused. */
  max: number;
  windowS: number;
  /** Shared counters (Redis) for several instances; unset: this process's memory. */
  store?: Store;
}

export type AuthFailureCheck = { blocked: false } | { blocked: true; retryAfterS: number };

/**
 * Counts failed authentications per client address (IPv6 by /56, as a host
 * usually holds a whole prefix) so that keys cannot be guessed at request rate.
 * Once an address is over the limit all its requests are refused, a valid key
 * included: answering a right guess differently would tell the guesser.
 */
export class AuthFailureLimiter {
  private readonly store: Store;

  constructor(
    private readonly o: AuthFailureLimitOptions,
    private readonly log: Logger,
  ) {
    this.store = o.store ?? new MemoryStore();
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

  async check(req: Request): Promise<AuthFailureCheck> {
    try {
      const info = await this.store.get?.(addressOf(req));
      // rate-limit-redis reports an address it has never seen as NaN hits.
      if (!info || !(info.totalHits >= this.o.max)) return { blocked: false };
      const resetMs = info.resetTime ? info.resetTime.getTime() - Date.now() : this.o.windowS * 1000;
      return { blocked: true, retryAfterS: Math.max(1, Math.ceil(resetMs / 1000)) };
    } catch (err) {
      // The counters guard against guessing; losing them for a while must not take the API down with them.
      this.log.warn({ err }, 'failed-authentication counters unavailable; not limiting');
      return { blocked: false };
    }
  }

  async recordFailure(req: Request): Promise<void> {
    try {
      await this.store.increment(addressOf(req));
    } catch (err) {
      this.log.warn({ err }, 'failed-authentication counters unavailable; not counted');
    }
  }

  async close(): Promise<void> {
    await this.store.shutdown?.();
  }
}

function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

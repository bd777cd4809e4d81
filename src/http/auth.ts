import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../domain/errors';
import type { ApiKeyStore, KeyCheck } from './api-keys';
import type { AuthFailureCheck, AuthFailureLimiter } from './auth-failures';
import { durationName } from './key-rate-limit';

declare module 'express-serve-static-core' {
  interface Request {
    /** Id of the API key that authenticated the request. */
    keyId?: string;
  }
}

/**
 * Requires a valid key in the configured header: missing 401, unknown or
 * revoked 403; an address with too many of those lately 429 for every request
 * without a valid key. A valid key is served whatever its address did: one
 * client sending a stale key must not lock out the others behind the same NAT
 * or proxy. Keys are long enough (random ones from `keys create`, 16 characters
 * at least in API_KEYS) that guessing them needs no answer withheld.
 */
export function requireApiKey(
  keys: ApiKeyStore,
  header: string,
  failures: AuthFailureLimiter,
): RequestHandler {
  const name = header.toLowerCase();
  const failurePolicy = `"${failures.max}-failures-in-${durationName(failures.windowS)}"`;
  const challenge = `ApiKey header="${header}"`;
  // Asked only for a request without a valid key; synchronous unless the counters are shared.
  const decide = (
    req: Request,
    res: Response,
    next: NextFunction,
    reason: Extract<KeyCheck, { ok: false }>['reason'],
    limited: AuthFailureCheck,
  ): void | Promise<void> => {
    if (limited.blocked) {
      res.setHeader('Retry-After', String(limited.retryAfterS));
      // The IETF draft-8 headers, as every other 429 sends them, for the policy that refused it.
      res.setHeader('RateLimit-Policy', `${failurePolicy}; q=${failures.max}; w=${failures.windowS}`);
      res.setHeader('RateLimit', `${failurePolicy}; r=0; t=${limited.retryAfterS}`);
      next(
        new AppError(
          'RATE_LIMITED',
          `Too many failed authentications from this address (more than ${failures.max} in ${failures.windowS} s); retry after ${limited.retryAfterS} s.`,
        ),
      );
      return;
    }
    return refuse(req, res, next, reason);
  };
  const refuse = async (
    req: Request,
    res: Response,
    next: NextFunction,
    reason: Extract<KeyCheck, { ok: false }>['reason'],
  ) => {
    // Only a key that was sent and refused is a guess. A request without one guesses nothing, and
    // any web page can make its visitors' browsers send such requests (an image, a preflight):
    // counted, they would lock whole offices behind one address out.
    if (reason !== 'missing') await failures.recordFailure(req);
    if (reason === 'missing') {
      // A 401 names the way to authenticate (RFC 9110, 11.6.1): here, a key in this header.
      res.setHeader('WWW-Authenticate', challenge);
      next(new AppError('UNAUTHENTICATED', `Send an API key in the ${header} header.`));
    } else {
      next(
        new AppError(
          'FORBIDDEN',
          `The API key in the ${header} header is ${reason === 'revoked' ? 'revoked' : 'not known'}.`,
        ),
      );
    }
  };
  return (req, res, next) => {
    const raw = req.headers[name];
    const result = keys.check(Array.isArray(raw) ? raw[0] : raw);
    if (result.ok) {
      req.keyId = result.id;
      next();
      return;
    }
    const { reason } = result;
    const limited = failures.check(req);
    return limited instanceof Promise
      ? limited.then((l) => decide(req, res, next, reason, l))
      : decide(req, res, next, reason, limited);
  };
}

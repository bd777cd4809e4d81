import type { RequestHandler } from 'express';
import { AppError } from '../domain/errors';
import type { ApiKeyStore } from './api-keys';
import type { AuthFailureLimiter } from './auth-failures';

declare module 'express-serve-static-core' {
  interface Request {
    /** Id of the API key that authenticated the request. */
    keyId?: string;
  }
}

/**
 * Requires a valid key in the configured header: missing 401, unknown or
 * revoked 403; an address with too many of those lately 429, whatever it sends.
 */
export function requireApiKey(
  keys: ApiKeyStore,
  header: string,
  failures: AuthFailureLimiter,
): RequestHandler {
  const name = header.toLowerCase();
  return async (req, res, next) => {
    const limited = await failures.check(req);
    if (limited.blocked) {
      res.setHeader('Retry-After', String(limited.retryAfterS));
      next(
        new AppError(
          'RATE_LIMITED',
          `Too many failed authentications from this address (more than ${failures.max} in ${failures.windowS} s); retry after ${limited.retryAfterS} s.`,
        ),
      );
      return;
    }
    const raw = req.headers[name];
    const result = keys.check(Array.isArray(raw) ? raw[0] : raw);
    if (result.ok) {
      req.keyId = result.id;
      next();
      return;
    }
    await failures.recordFailure(req);
    if (result.reason === 'missing') {
      next(new AppError('UNAUTHENTICATED', `Send an API key in the ${header} header.`));
    } else {
      next(
        new AppError(
          'FORBIDDEN',
          `The API key in the ${header} header is ${result.reason === 'revoked' ? 'revoked' : 'not known'}.`,
        ),
      );
    }
  };
}

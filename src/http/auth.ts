import type { RequestHandler } from 'express';
import { AppError } from '../domain/errors';
import type { ApiKeyStore } from './api-keys';

declare module 'express-serve-static-core' {
  interface Request {
    /** Id of the API key that authenticated the request. */
    keyId?: string;
  }
}

/** Requires a valid key in the configured header: missing 401, unknown or revoked 403. */
export function requireApiKey(keys: ApiKeyStore, header: string): RequestHandler {
  const name = header.toLowerCase();
  return (req, _res, next) => {
    const raw = req.headers[name];
    const result = keys.check(Array.isArray(raw) ? raw[0] : raw);
    if (result.ok) {
      req.keyId = result.id;
      next();
    } else if (result.reason === 'missing') {
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

import type { Request } from 'express';
import { AppError, badRequest } from '../domain/errors';

/** Whether a request carries a body (RFC 9112: a Transfer-Encoding, or a Content-Length above 0). */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * The JSON body of a route that reads one: refused unless it is an object (not null, an array or a
 * string). A body of another media type, or of none named, is refused with 415 (the parser leaves it
 * unread, and the route would find no body). Routes that read no body (a cancel) do not call this,
 * so whatever a client sends with them is ignored.
 */
export function jsonObjectBody(req: Request): Record<string, unknown> {
  if (hasBody(req) && !req.is('application/json'))
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  const body: unknown = req.body;
  if (!isJsonObject(body)) throw badRequest([{ field: 'body', reason: 'must be a JSON object' }]);
  return body;
}

/** Whether a parsed JSON value is an object: not null, an array or a scalar. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

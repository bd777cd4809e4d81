import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, ERROR_CODES, isAppError } from '../domain/errors';
import type { ErrorCode, FieldError } from '../domain/errors';
import type { Logger } from '../logger';

/** The RFC 9457 body of one error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code: ErrorCode;
  request_id?: string;
  errors?: FieldError[];
}

/**
 * The request's address as a problem names it: whole, but for a download link, whose query is its
 * signature and expiry: a refused link's problem (which clients and proxies may log) names the file.
 */
function instanceOf(req: Request): string {
  const url = req.originalUrl;
  // Routes match without regard to case, so /Downloads/... is a download link too.
  return /^\/downloads\//i.test(url) ? url.split('?')[0]! : url;
}

export function problemOf(e: AppError, req?: Request): Problem {
  const { status, title } = ERROR_CODES[e.code];
  return {
    type: `/docs#error-${e.code.toLowerCase().replace(/_/g, '-')}`,
    title,
    status,
    detail: e.message,
    ...(req ? { instance: instanceOf(req) } : {}),
    code: e.code,
    ...(req?.id ? { request_id: String(req.id) } : {}),
    ...(e.fieldErrors.length > 0 ? { errors: e.fieldErrors } : {}),
  };
}

export function sendProblem(res: Response, e: AppError, req?: Request): void {
  // A failure is no version of the resource: the validator a data read set on its way in goes.
  res.removeHeader('ETag');
  // Nor is it the file a download would have saved under its name.
  res.removeHeader('Content-Disposition');
  if (e.retryAfterS !== undefined) res.setHeader('Retry-After', String(e.retryAfterS));
  res
    .status(e.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemOf(e, req)));
}

/** The 404 of a path no route has, under any method. */
export function sendNoRoute(res: Response, req: Request): void {
  sendProblem(
    res,
    new AppError('NOT_FOUND', `No route ${req.method} ${req.originalUrl.split('?')[0]}.`),
    req,
  );
}

/**
 * The last handler: expected errors become their problem document; anything
 * else is logged with the request id and answered as a bare 500.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const e = toAppError(err);
    if (e.code === 'INTERNAL') log.error({ err, req_id: req.id, url: req.originalUrl }, 'unhandled error');
    sendProblem(res, e, req);
  };
}

/** The 413 of a body over `limit` bytes (unknown: not named). */
export function bodyTooLarge(limit: unknown): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    typeof limit === 'number'
      ? `The request body is too large: at most ${limit.toLocaleString('en-US')} bytes here.`
      : 'The request body is too large.',
  );
}

/** Body-parser and similar errors carry a status; everything unknown is internal. */
function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const status = (err as { status?: unknown; type?: unknown } | null)?.status;
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed')
    return new AppError(
      'BAD_REQUEST',
      'The request body must be a JSON object; it could not be read as one.',
    );
  if (type === 'entity.too.large') return bodyTooLarge((err as { limit?: unknown }).limit);
  if (status === 404) return new AppError('NOT_FOUND', 'Not found.');
  // JSON is read as UTF-8 only (RFC 8259): a body labelled with another charset is refused for that.
  if (type === 'charset.unsupported') {
    const charset = (err as { charset?: unknown }).charset;
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Send the body as application/json in UTF-8${typeof charset === 'string' ? ` (charset "${charset.slice(0, 40)}" is not read)` : ''}.`,
    );
  }
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  // A download asked for with conditions or a range (served by express's file sender).
  if (status === 412)
    return new AppError(
      'PRECONDITION_FAILED',
      'The file does not meet the If-Match or If-Unmodified-Since condition sent with the request.',
    );
  if (status === 416)
    return new AppError(
      'RANGE_NOT_SATISFIABLE',
      'The range asked for lies outside the file; Content-Range gives its length.',
    );
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('BAD_REQUEST', 'The request could not be read.');
  }
  return new AppError('INTERNAL', 'An internal error occurred; it has been logged with the request id.');
}

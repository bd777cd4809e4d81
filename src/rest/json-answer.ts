import type { Response } from 'express';

/**
 * Sends `body` as JSON with the status already set (200 unless told): what
 * express's `res.json` sends for the /v1 routes, without the steps they do not
 * need there. `res.json` parses the Content-Type it has just set to add the
 * charset, copies a body past 1,000 characters into a buffer to measure it, and
 * checks freshness, which `conditionalReads` has already done for the data
 * reads (the other routes send no validator). That was 7 to 20 µs of server
 * CPU per profile read on the benchmark machine (bench/README.md).
 */
export function sendJson(res: Response, body: unknown): void {
  if (res.statusCode === 200 && anyTag.has(res)) {
    res.status(304).end();
    return;
  }
  // `undefined` (which no operation gives) goes as null rather than as no body at all.
  const text = JSON.stringify(body) ?? 'null';
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (res.req.method === 'HEAD') res.end();
  else res.end(text);
}

/** Reads asked for with `If-None-Match: *`: answered 304 by sendJson once the route has found what it reads. */
const anyTag = new WeakSet<Response>();

/**
 * Makes a successful read of this request a 304 without its body (`If-None-Match: *` matches any
 * current answer, RFC 9110, 13.1.2), while a failure (not found, refused) is answered as it is.
 */
export function notModifiedWhenFound(res: Response): void {
  anyTag.add(res);
}

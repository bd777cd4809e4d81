import type { RequestHandler } from 'express';

/**
 * Cross-origin access for the listed origins only: their requests get the
 * Access-Control headers, and their preflights are answered here, before
 * authentication, since browsers send preflights without the key. Any other
 * origin gets no CORS headers, so browsers keep its pages out.
 */
export function cors(origins: readonly string[], keyHeader: string): RequestHandler {
  const allowed = new Set(origins);
  return (req, res, next) => {
    res.vary('Origin');
    const origin = req.headers.origin;
    if (!origin || !allowed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader(
      'Access-Control-Expose-Headers',
      'ETag, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location, Idempotent-Replayed',
    );
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
      // Apollo's two headers, which some GraphQL clients send on every request.
      res.setHeader(
        'Access-Control-Allow-Headers',
        `Content-Type, If-None-Match, Idempotency-Key, ${keyHeader}, Apollo-Require-Preflight, X-Apollo-Operation-Name`,
      );
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}

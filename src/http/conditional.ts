import type { RequestHandler } from 'express';

/** Read routes whose answers change only when the data does (not jobs, whose state moves on its own). */
const DATA_READS = /^\/(companies|edges|clusters)(\/|$)/;

/** An entity tag without its weakness mark. */
const weakly = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * ETag and 304 for the data reads. The data changes only on import, so the
 * store generation (with the search index's) validates every read at once,
 * without hashing bodies; the boot id makes a restart, possibly with new code,
 * a new validator too. Only successful answers carry the tag: every failure is answered by
 * sendProblem, which removes it.
 */
export function conditionalReads(dataVersion: () => string): RequestHandler {
  const boot = Date.now().toString(36);
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !DATA_READS.test(req.path)) return next();
    const opaque = `"${boot}-${dataVersion()}"`;
    const tag = `W/${opaque}`;
    const sent = req.headers['if-none-match'];
    // If-None-Match compares weakly (RFC 9110, 13.1.2): a tag sent without its W/ matches too.
    if (sent && sent.split(',').some((t) => weakly(t.trim()) === opaque || t.trim() === '*')) {
      res.setHeader('ETag', tag);
      res.status(304).end();
      return;
    }
    // Set now rather than by wrapping res.json, which cost a profile read about 4% of its CPU;
    // a failure's problem document takes the tag off again (sendProblem).
    res.setHeader('ETag', tag);
    next();
  };
}

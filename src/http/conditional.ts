import type { RequestHandler } from 'express';
import { notModifiedWhenFound } from '../rest/json-answer';
import { fnv1a } from '../store/string-hash';

/** Read routes whose answers change only when the data does (not jobs, whose state moves on its own). */
const DATA_READS = /^\/(companies|edges|clusters)(\/|$)/;

/** An entity tag without its weakness mark. */
const weakly = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * ETag and 304 for the data reads. The data changes only on import, so the
 * store generation (with the search index's) validates every read at once,
 * without hashing bodies; the boot id makes a restart, possibly with new code,
 * a new validator too. The request's address (the host it was sent to, which
 * links name when no public URL is set, the path and the query) is part of the
 * tag, so a tag names one answer: sent for another id, another list or
 * parameters that are refused, it matches nothing and the request is answered
 * as without it. Only successful answers carry the tag: every failure is
 * answered by sendProblem, which removes it.
 */
export function conditionalReads(dataVersion: () => string): RequestHandler {
  const boot = Date.now().toString(36);
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !DATA_READS.test(req.path)) return next();
    const address = `${req.protocol}://${req.get('host') ?? ''}${req.originalUrl}`;
    const opaque = `"${boot}-${dataVersion()}-${fnv1a(address).toString(36)}.${address.length.toString(36)}"`;
    const tag = `W/${opaque}`;
    const sent = req.headers['if-none-match'];
    if (sent) {
      const tags = sent.split(',').map((t) => t.trim());
      // If-None-Match compares weakly (RFC 9110, 13.1.2): a tag sent without its W/ matches too.
      if (tags.some((t) => weakly(t) === opaque)) {
        res.setHeader('ETag', tag);
        res.status(304).end();
        return;
      }
      // `*` matches whatever the resource is, if there is one: known only once the route has found it.
      if (tags.includes('*')) notModifiedWhenFound(res);
    }
    // Set now rather than by wrapping res.json, which cost a profile read about 4% of its CPU;
    // a failure's problem document takes the tag off again (sendProblem).
    res.setHeader('ETag', tag);
    next();
  };
}

import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

/**
 * The one inline style the app's pages take: the rule cytoscape (the tier map) writes into a style
 * element of its own before it draws. Should a new version write another, the map still draws, but
 * the browser reports the violation, which the browser tests fail on.
 */
const CYTOSCAPE_STYLE = '.__________cytoscape_container { position: relative; }';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The Content-Security-Policy of the analyst app's pages and files, which keep the API key in the
 * browser: scripts, styles and requests from this server only, so that markup slipped into a page
 * runs nothing and sends nothing elsewhere. The app has no inline script; its styles are in its
 * stylesheet or set through the DOM. The GraphQL explorer and the API reference are other pages,
 * with a policy of their own.
 */
export const APP_PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${sha256(CYTOSCAPE_STYLE)}`,
  // The pages' empty icon (`data:,`), which spares the browser a request for /favicon.ico.
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Under /v1: a tier-view run's start, its state and its signed download links, and the list of runs. */
const JOB_PATHS = /^\/(?:tierviewjob|jobs)(?:\/|$)/i;

/**
 * Headers of every answer under /v1 and /graphql, set before anything answers (a refusal too):
 * never sniffed into another type, and never kept by a shared cache. The key travels in a header of
 * its own, not Authorization, so a shared cache would not know these answers are one client's.
 * Data reads are `private`: a browser may keep them and revalidate them by their ETag. Job answers
 * hold download links anyone may follow until they expire, and are kept nowhere; so are GraphQL
 * answers, whatever they hold (Apollo marked those it executed `no-store` before).
 */
export function apiAnswerHeaders(api: 'rest' | 'graphql'): RequestHandler {
  return (req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader(
      'Cache-Control',
      api === 'graphql' || JOB_PATHS.test(req.path) ? 'private, no-store' : 'private',
    );
    next();
  };
}

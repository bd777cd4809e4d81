import type { Request } from 'express';
import { badRequest } from '../domain/errors';
import { PAGE_DEFAULTS } from '../domain/params';
import type { RestDeps } from './rest-deps';

/**
 * The address the client reached this server by (`http://host:port`; the protocol and host behind
 * TRUST_PROXY's proxies): what links name when no public URL is set.
 */
export function requestOrigin(req: Request): string {
  const host = req.get('host') ?? 'localhost';
  // A link names only a host: a Host header that is none (`a/b?c`) would send the client elsewhere.
  if (!HOST.test(host))
    throw badRequest([
      { field: 'header.Host', reason: 'must be a host name or address, with an optional port' },
    ]);
  return `${req.protocol}://${host}`;
}

/** A host name, an IPv4 or a bracketed IPv6 address, and an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d{1,5})?$/;

/**
 * Absolute `next` and `previous` links of a paged response: the request's own
 * URL with every parameter kept and only `offset` (and an explicit `limit`) set.
 * `next` is null when the next page would start past `maxOffset`, which is
 * refused (deep paging is for narrower criteria), though `has_more` says more
 * rows follow.
 *
 * Bodies name `next` and `previous` (pageBody) rather than spread this object
 * into them, and routes add to objects they have rather than spread them into
 * copies: on this Node's V8 an object made by a spread and then added to gets
 * a shape of its own every time, which made every property lookup on a page
 * body and on a list's GraphQL variables miss V8's caches, and JSON.stringify
 * slower (bench/README.md, 2026-12-01, morning).
 */
export function pageLinks(
  req: Request,
  { publicUrl, maxOffset }: Pick<RestDeps, 'publicUrl' | 'maxOffset'>,
  page: { limit: number; offset: number; hasMore: boolean },
): { next: string | null; previous: string | null } {
  const base = publicUrl ? publicUrl.replace(/\/$/, '') : requestOrigin(req);
  const path = req.originalUrl.split('?')[0] ?? req.path;
  const link = (offset: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query)) {
      if (k !== 'offset' && k !== 'limit' && typeof v === 'string') params.set(k, v);
    }
    params.set('limit', String(page.limit));
    params.set('offset', String(offset));
    return `${base}${path}?${params.toString()}`;
  };
  return {
    next: page.hasMore && page.offset + page.limit <= maxOffset ? link(page.offset + page.limit) : null,
    previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
  };
}

/** The page a request asked for (its parsed `limit` and `offset`, or the defaults), and whether more rows follow it. */
export function askedPage(
  q: Record<string, unknown>,
  hasMore: boolean,
): { limit: number; offset: number; hasMore: boolean } {
  return {
    limit: typeof q.limit === 'number' ? q.limit : PAGE_DEFAULTS.limit,
    offset: typeof q.offset === 'number' ? q.offset : PAGE_DEFAULTS.offset,
    hasMore,
  };
}

/** The body of a paged answer: its links, then its results. */
export function pageBody<T>(
  req: Request,
  deps: Pick<RestDeps, 'publicUrl' | 'maxOffset'>,
  page: { limit: number; offset: number; hasMore: boolean },
  results: T,
): { next: string | null; previous: string | null; results: T } {
  const links = pageLinks(req, deps, page);
  return { next: links.next, previous: links.previous, results };
}

import type { Request } from 'express';

/**
 * Absolute `next` and `previous` links of a paged response: the request's own
 * URL with every parameter kept and only `offset` (and an explicit `limit`) set.
 */
export function pageLinks(
  req: Request,
  publicUrl: string | undefined,
  page: { limit: number; offset: number; hasMore: boolean },
): { next: string | null; previous: string | null } {
  const base = publicUrl
    ? publicUrl.replace(/\/$/, '')
    : `${req.protocol}://${req.get('host') ?? 'localhost'}`;
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
    next: page.hasMore ? link(page.offset + page.limit) : null,
    previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
  };
}

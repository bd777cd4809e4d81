import type { Request, Response } from 'express';
import { badRequest } from '../domain/errors';

/** What a route runs once the request is authenticated; a rejection goes to the error handler. */
export type RouteHandler<P extends Record<string, string> = Record<string, string>> = (
  req: Request<P>,
  res: Response,
) => void | Promise<void>;

/** The parameters a pattern names: `/companies/:vid/suppliers` gives `{ vid: string }`. */
export type ParamsOf<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Record<Name, string> & ParamsOf<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Record<Name, string>
    : Record<never, string>;

type Method = 'GET' | 'POST' | 'DELETE';

interface Route {
  method: Method;
  /** As written, for listings. */
  path: string;
  /** The pattern's segments: a literal in lower case, or a parameter's name after ':'. */
  segments: string[];
  handler: RouteHandler;
}

/** A route found for a request, or the methods its path answers under (none: no such path). */
export type RouteMatch =
  { handler: RouteHandler; params: Record<string, string> } | { handler: null; allowed: string[] };

/**
 * The routes of one API version, as patterns such as `/companies/:vid/suppliers`,
 * matched the way express's router matches them by default: literal segments in
 * any case, one trailing slash allowed, a parameter one non-empty segment,
 * percent-decoded. Unlike a router, a request is matched by splitting its path
 * once instead of walking one layer per route and per router (`src/http/dispatch-under.ts`
 * runs it).
 */
export class RouteTable {
  private readonly routes: Route[] = [];

  get<Path extends string>(path: Path, handler: RouteHandler<ParamsOf<Path>>): this {
    return this.add('GET', path, handler);
  }

  post<Path extends string>(path: Path, handler: RouteHandler<ParamsOf<Path>>): this {
    return this.add('POST', path, handler);
  }

  delete<Path extends string>(path: Path, handler: RouteHandler<ParamsOf<Path>>): this {
    return this.add('DELETE', path, handler);
  }

  /** Adds another table's routes after this one's (earlier routes win, as in a router). */
  include(other: RouteTable): this {
    this.routes.push(...other.routes);
    return this;
  }

  /** Every route's method and pattern, in the order they are matched. */
  list(): { method: Method; path: string }[] {
    return this.routes.map(({ method, path }) => ({ method, path }));
  }

  /**
   * The first route for `method` (HEAD as GET) on `path` (no query), with its
   * parameters; else the methods the path answers under. A parameter that is not
   * valid percent-encoding is the client's mistake (400).
   */
  find(method: string, path: string): RouteMatch {
    const parts = segmentsOf(path);
    if (!parts) return { handler: null, allowed: [] };
    const wanted = method === 'HEAD' ? 'GET' : method;
    // Made only for a path some route has under another method: not on the way to an answer.
    let allowed: Set<string> | null = null;
    for (const route of this.routes) {
      if (!matches(route.segments, parts)) continue;
      if (route.method === wanted) return { handler: route.handler, params: paramsOf(route.segments, parts) };
      (allowed ??= new Set()).add(route.method);
    }
    if (!allowed) return { handler: null, allowed: [] };
    if (allowed.has('GET')) allowed.add('HEAD');
    return { handler: null, allowed: [...allowed].sort() };
  }

  private add<P extends Record<string, string>>(
    method: Method,
    path: string,
    handler: RouteHandler<P>,
  ): this {
    const segments = path
      .split('/')
      .slice(1)
      .map((s) => (s.startsWith(':') ? s : s.toLowerCase()));
    if (!path.startsWith('/') || segments.some((s) => s === '' || s === ':'))
      throw new Error(`Route pattern ${path} is not of the form /literal/:param/...`);
    this.routes.push({ method, path, segments, handler: handler as unknown as RouteHandler });
    return this;
  }
}

/** The path's segments, one trailing slash ignored; null when it has an empty one (`//`). */
function segmentsOf(path: string): string[] | null {
  if (!path.startsWith('/')) return null;
  const end = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
  const parts = path.slice(1, end).split('/');
  return parts.includes('') ? null : parts;
}

/** Whether the path's segments fit the pattern's: as many, and every literal the same in any case. */
function matches(pattern: string[], parts: string[]): boolean {
  if (pattern.length !== parts.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = parts[i]!;
    if (!want.startsWith(':') && got !== want && got.toLowerCase() !== want) return false;
  }
  return true;
}

/** The parameters of a path that `matches` the pattern, decoded. */
function paramsOf(pattern: string[], parts: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  pattern.forEach((want, i) => {
    if (want.startsWith(':')) params[want.slice(1)] = decodeParam(want.slice(1), parts[i]!);
  });
  return params;
}

function decodeParam(name: string, raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest([{ field: `path.${name}`, reason: 'not valid percent-encoding' }]);
  }
}

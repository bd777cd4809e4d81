import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, badRequest } from '../domain/errors';
import { sendProblem } from './problem';

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
 * once instead of walking one layer per route and per router (see `dispatchUnder`).
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
    const wanted = method === 'HEAD' ? 'GET' : method;
    const allowed = new Set<string>();
    for (const route of this.routes) {
      const params = parts && paramsOf(route.segments, parts);
      if (!params) continue;
      if (route.method === wanted) return { handler: route.handler, params };
      allowed.add(route.method);
    }
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

function paramsOf(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = parts[i]!;
    if (want.startsWith(':')) params[want.slice(1)] = decodeParam(want.slice(1), got);
    else if (got !== want && got.toLowerCase() !== want) return null;
  }
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

/**
 * One middleware for every request under `prefix` (`/v1`): runs `before`
 * (authentication, rate limit, body parsing, validators) as a router would, then
 * the table's route, or answers 405 with `Allow` for a path known under other
 * methods and 404 for any other. Inside, `req.baseUrl` is the prefix and
 * `req.url` the rest, as under a mounted router; errors go on to the app's error
 * handler with the URL as it came. Other paths pass by at the cost of one
 * comparison. A GET under /v1 crossed some twenty router layers before: this
 * costs a profile read 10 to 45 µs of server CPU less, an edge about 20
 * (1M companies, fresh servers side by side; bench/README.md).
 */
export function dispatchUnder(
  prefix: string,
  table: RouteTable,
  before: RequestHandler[],
): RequestHandler & { table: RouteTable } {
  const lower = prefix.toLowerCase();
  const dispatch: RequestHandler = (req, res, next) => {
    const url = req.url;
    // The prefix, then the end, '/' or '?', in any case: where express would mount a router.
    const after = url.length === prefix.length ? '' : url[prefix.length];
    if (after !== '' && after !== '/' && after !== '?') return next();
    const head = url.slice(0, prefix.length);
    if (head !== prefix && head.toLowerCase() !== lower) return next();
    const rest = url.slice(prefix.length);
    req.baseUrl = head;
    req.url = rest.startsWith('/') ? rest : `/${rest}`;
    const fail = (err: unknown) => {
      req.url = url;
      req.baseUrl = '';
      next(err);
    };
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) {
        fail(err);
        return;
      }
      try {
        if (i < before.length) settle(before[i++]!(req, res, step as NextFunction), fail);
        else answer(req, res, table, fail);
      } catch (e) {
        fail(e);
      }
    };
    step();
  };
  // The table stays reachable from the app's router, for the tests that list what the API answers.
  return Object.assign(dispatch, { table });
}

/** Passes a middleware's or handler's rejection on, as express 5 does. */
function settle(result: unknown, fail: (err: unknown) => void): void {
  if (result instanceof Promise)
    result.then(undefined, (e: unknown) => fail(e ?? new Error('Rejected promise')));
}

function answer(req: Request, res: Response, table: RouteTable, fail: (err: unknown) => void): void {
  const q = req.url.indexOf('?');
  const found = table.find(req.method, q < 0 ? req.url : req.url.slice(0, q));
  if (found.handler) {
    req.params = found.params;
    settle(found.handler(req as unknown as Request<Record<string, string>>, res), fail);
    return;
  }
  const path = req.originalUrl.split('?')[0];
  if (found.allowed.length === 0) {
    sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${path}.`), req);
    return;
  }
  res.setHeader('Allow', found.allowed.join(', '));
  sendProblem(
    res,
    new AppError(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not allowed on ${path}; use ${found.allowed.join(', ')}.`,
    ),
    req,
  );
}

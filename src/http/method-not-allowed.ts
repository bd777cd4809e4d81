import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError } from '../domain/errors';
import { sendProblem } from './problem';

/** The parts of express's router layers read here (router 2). */
interface Layer {
  route?: { methods: Record<string, boolean | undefined> };
  handle?: { stack?: Layer[] };
  /** What of the path the layer matched (a router's mount point), or false. */
  match(path: string): { path: string } | false;
}

/**
 * The methods a router's routes answer on a path, read from the router itself
 * (routers mounted in it included, at their mount points), so that a route
 * added anywhere is covered without a list kept beside it.
 */
export function allowedMethods(router: Router, path: string): string[] {
  const found = new Set<string>();
  const walk = (stack: Layer[], rest: string) => {
    for (const layer of stack) {
      const matched = matchOf(layer, rest);
      if (!matched) continue;
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') found.add(method.toUpperCase());
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack, rest.slice(matched.path.length) || '/');
      }
    }
  };
  walk((router as unknown as { stack: Layer[] }).stack, path);
  if (found.has('GET')) found.add('HEAD');
  return [...found].sort();
}

function matchOf(layer: Layer, path: string): { path: string } | false {
  try {
    return layer.match(path);
  } catch {
    // A path the router cannot decode matches nothing; the router reports it.
    return false;
  }
}

/**
 * Last handler of a router: a path that exists under other methods answers 405
 * with `Allow` (RFC 9110 15.5.6); anything else is passed on as not found.
 */
export function methodNotAllowed(router: Router): RequestHandler {
  return (req, res, next) => {
    const allowed = allowedMethods(router, req.path);
    if (allowed.length === 0 || allowed.includes(req.method)) {
      next();
      return;
    }
    sendMethodNotAllowed(res, req, allowed);
  };
}

/** The 405 of a path that exists under the `allowed` methods only (RFC 9110 15.5.6), with `Allow`. */
export function sendMethodNotAllowed(res: Response, req: Request, allowed: string[]): void {
  res.setHeader('Allow', allowed.join(', '));
  sendProblem(
    res,
    new AppError(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not allowed on ${req.originalUrl.split('?')[0]}; use ${allowed.join(', ')}.`,
    ),
    req,
  );
}

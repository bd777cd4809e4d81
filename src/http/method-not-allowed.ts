import type { RequestHandler, Router } from 'express';
import { AppError } from '../domain/errors';
import { sendProblem } from './problem';

/** The parts of express's router layers read here (router 2). */
interface Layer {
  route?: { methods: Record<string, boolean | undefined> };
  handle?: { stack?: Layer[] };
  /** Mounted with `use()` and no path: sees every request. */
  slash?: boolean;
  match(path: string): unknown;
}

/**
 * The methods a router's routes answer on a path, read from the router itself
 * so that a route added anywhere is covered without a list kept beside it.
 * Routers mounted under a path of their own are left to answer for themselves.
 */
export function allowedMethods(router: Router, path: string): string[] {
  const found = new Set<string>();
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        if (!matches(layer, path)) continue;
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') found.add(method.toUpperCase());
        }
      } else if (layer.slash && layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((router as unknown as { stack: Layer[] }).stack);
  if (found.has('GET')) found.add('HEAD');
  return [...found].sort();
}

function matches(layer: Layer, path: string): boolean {
  try {
    return Boolean(layer.match(path));
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
    res.setHeader('Allow', allowed.join(', '));
    sendProblem(
      res,
      new AppError(
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed on ${req.originalUrl.split('?')[0]}; use ${allowed.join(', ')}.`,
      ),
      req,
    );
  };
}

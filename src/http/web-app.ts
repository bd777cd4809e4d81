import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { Router } from 'express';

/** Paths the server owns; the app's history fallback never answers under them. */
export const SERVER_PATHS = [
  '/v1',
  '/graphql',
  '/explorer',
  '/docs',
  '/openapi.json',
  '/healthz',
  '/readyz',
  '/downloads',
];

/** Where `npm run build` writes the app (dist/web), found from this module in src/ or dist/src/. */
export function webAppDir(): string | null {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'dist', 'web');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    dir = path.dirname(dir);
  }
  return null;
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tiergraph</title></head>
<body><h1>tiergraph</h1>
<p>The web app is not built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it) and reload.</p>
<p>The API is available: <a href="/docs">API reference</a>, <a href="/explorer">GraphQL explorer</a>.</p></body></html>`;

function isServerPath(p: string): boolean {
  return SERVER_PATHS.some((s) => p === s || p.startsWith(`${s}/`));
}

/**
 * The analyst app: hashed assets kept by browsers for good, and the page itself
 * (never cached, so a new build is picked up) at `/` and at any other browser
 * navigation outside the server's own paths, so that reloading
 * `/companies/{vid}` opens the app there.
 */
export function webAppRoutes(keyHeader: string, dir: string | null = webAppDir()): Router {
  const r = express.Router();
  const page = dir
    ? fs.readFileSync(path.join(dir, 'index.html'), 'utf8').replace('%KEY_HEADER%', keyHeader)
    : NOT_BUILT;
  if (dir) {
    r.use(
      '/assets',
      express.static(path.join(dir, 'assets'), {
        index: false,
        fallthrough: false,
        immutable: true,
        maxAge: '365d',
      }),
    );
  }
  // Middleware rather than a route: the page is not an API route (and the OpenAPI check lists routes).
  r.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // API clients asking for an unknown path keep getting a problem document, not a page.
    const browser = req.path === '/' || (req.headers.accept ?? '').includes('text/html');
    if (isServerPath(req.path) || !browser || path.extname(req.path) !== '') return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(page);
  });
  return r;
}

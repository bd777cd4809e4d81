import { ruruHTML } from 'ruru/server';
import type { RuruServerConfig } from 'ruru/server';
import path from 'node:path';
import express from 'express';
import type { RequestHandler } from 'express';
import { AppError } from '../domain/errors';

const STATIC_PATH = '/explorer/static/';

/** The GraphQL explorer page; its assets are served by this app, so it works offline. */
export function explorerPage(keyHeader: string): string {
  return ruruHTML({
    endpoint: '/graphql',
    staticPath: STATIC_PATH,
    clientConfig: {
      initialHeaders: JSON.stringify({ [keyHeader]: 'paste your API key here' }, null, 2),
      defaultQuery: `# Find a company, then follow its suppliers and their evidence.
query FindSuppliers {
  companies(name: "acme", limit: 3) {
    results {
      vid
      name
      search_similarity
      suppliers(limit: 5) {
        results {
          supplier { vid name country }
          relationship { confidence_score latest_relationship_date edge_ids }
        }
      }
    }
  }
}
`,
      // The client config type marks every option as present; the page needs only these two.
    } as RuruServerConfig['clientConfig'],
  });
}

/** Serves the explorer's bundled assets from the installed package (no network needed). */
export function explorerStatic(): RequestHandler {
  const dir = path.join(path.dirname(require.resolve('ruru/static')), '..', 'static');
  const serve = express.static(dir, { index: false, fallthrough: false, immutable: true, maxAge: '7d' });
  return (req, res, next) => {
    // serve-static answers other methods with a bare 405 of its own; errors here are problem documents.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      next(
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on the explorer's files; use GET, HEAD.`,
        ),
      );
      return;
    }
    serve(req, res, next);
  };
}

import { ruruHTML } from 'ruru/server';
import type { RuruServerConfig } from 'ruru/server';
import path from 'node:path';
import express from 'express';
import type { RequestHandler } from 'express';
import { AppError } from '../domain/errors';

const STATIC_PATH = '/explorer/static/';

/** Where the web app keeps the API key in the browser; the explorer and the API reference share it. */
export const KEY_STORAGE = 'tiergraph.apiKey';

/**
 * Runs before the explorer starts: takes the key the web app stored on this
 * origin, or asks for it once and keeps it there, and puts it in the headers
 * the explorer sends. The key never appears in the page or an address.
 */
function useStoredKey(keyHeader: string): string {
  return `<script>
(function () {
  var name = ${JSON.stringify(KEY_STORAGE)};
  var key = localStorage.getItem(name);
  if (!key) {
    key = window.prompt('API key for the GraphQL explorer (kept in this browser; "Forget API key" in the app removes it):');
    if (key) { key = key.trim(); localStorage.setItem(name, key); }
  }
  var header = ${JSON.stringify(keyHeader)};
  var headers = {};
  headers[header] = key || 'paste your API key here';
  RURU_CONFIG.initialHeaders = JSON.stringify(headers, null, 2);
  // The explorer loads the schema before its header editor exists, so the key is
  // also added to its requests to the endpoint that carry none.
  var plain = window.fetch.bind(window);
  window.fetch = function (input, init) {
    var url = new URL(typeof input === 'string' ? input : input.url, location.href);
    if (!key || url.origin !== location.origin || url.pathname !== RURU_CONFIG.endpoint) return plain(input, init);
    var h = new Headers((init && init.headers) || (typeof input === 'string' ? undefined : input.headers));
    if (!h.has(header)) h.set(header, key);
    return plain(input, Object.assign({}, init, { headers: h }));
  };
})();
</script>`;
}

/** The GraphQL explorer page; its assets are served by this app, so it works offline. */
export function explorerPage(keyHeader: string): string {
  const html = ruruHTML({
    endpoint: '/graphql',
    staticPath: STATIC_PATH,
    clientConfig: {
      initialHeaders: JSON.stringify({ [keyHeader]: 'paste your API key here' }, null, 2),
      defaultQuery: `# The most connected companies, with their strongest suppliers.
# Add name: "..." to search by name. Press the run button (or Ctrl+Enter).
query FindSuppliers {
  companies(limit: 3) {
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
  const withKey = html.replace(/(const RURU_CONFIG = [\s\S]*?<\/script>)/, `$1\n${useStoredKey(keyHeader)}`);
  if (withKey === html) throw new Error('explorer page: the configuration script was not found');
  return withKey.replace(/<title>[^<]*<\/title>/, '<title>GraphQL explorer · tiergraph</title>');
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

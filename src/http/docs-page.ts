import path from 'node:path';
import express from 'express';
import type { RequestHandler } from 'express';
import { ERROR_CODES, GRAPHQL_REQUEST_CODES } from '../domain/errors';
import { KEY_STORAGE } from './explorer';

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

type Json = Record<string, unknown>;

const STATIC_PATH = '/docs/static';

/**
 * The API reference: Swagger UI, from its npm package and served by this app
 * (no network needed), rendering /openapi.json, with "try it out" sending the
 * key the web app keeps in this browser. Below it, a plain table of error codes
 * with an anchor each, the target of the `type` links of problem documents.
 */
export function docsPage(openapi: Json): string {
  const info = openapi.info as { title: string; version: string };
  const schemes = ((openapi.components as Json | undefined)?.securitySchemes ?? {}) as Json;
  const scheme = Object.keys(schemes)[0] ?? 'apiKey';
  const errors = Object.entries(ERROR_CODES)
    .map(
      ([code, { status, title }]) =>
        `<tr id="error-${code.toLowerCase().replace(/_/g, '-')}"><td><code>${code}</code></td><td>${status}</td><td>${esc(title)}</td></tr>`,
    )
    .join('');
  const graphqlErrors = Object.entries(GRAPHQL_REQUEST_CODES)
    .map(
      ([code, meaning]) =>
        `<tr id="error-${code.toLowerCase().replace(/_/g, '-')}"><td><code>${code}</code></td><td>${esc(meaning)}</td></tr>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${STATIC_PATH}/swagger-ui.css">
<style>
body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#111827}
.top{display:flex;gap:1.2rem;align-items:center;padding:.6rem 1.5rem;background:#0f172a}
.top a{color:#e2e8f0;text-decoration:none}.top a:hover{color:#fff;text-decoration:underline}.top .brand{font-weight:700;color:#fff;margin-right:1rem}
#errors{max-width:1460px;margin:1rem auto 3rem;padding:0 20px}
#errors table{border-collapse:collapse}#errors td,#errors th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
#errors tr:target{background:#fef3c7}
.swagger-ui .info .title small{background:#4b5563}.swagger-ui .info .title small pre{color:#fff}
.swagger-ui .info .title small.version-stamp{background:#166534}
.swagger-ui .info .base-url,.swagger-ui .info .url{color:#374151}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1d4ed8}.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#166534}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b91c1c}
.swagger-ui .btn.authorize{color:#166534;border-color:#166534}.swagger-ui .btn.authorize span{color:#166534}.swagger-ui .btn.authorize svg{fill:#166534}
</style></head>
<body>
<header class="top"><a class="brand" href="/">tiergraph</a><a href="/">Search</a><a href="/explorer">GraphQL explorer</a><a href="/openapi.json">openapi.json</a></header>
<div class="page">
<div id="swagger"><p style="padding:1rem 1.5rem">Loading the API reference…</p></div>
<section id="errors" aria-labelledby="errors-h"><h2 id="errors-h">Error codes</h2>
<p>Problem documents carry <code>code</code>, <code>status</code>, <code>detail</code> and, for invalid input, <code>errors</code> with each field and reason. GraphQL errors carry the same code in <code>extensions.code</code>. A 405 names the methods the path accepts in <code>Allow</code>; a 429 says in <code>Retry-After</code> when to retry, and so does the 503 a search or suggestion gets while a server that just started builds its first search index (<code>GET /readyz</code> answers 200 once it is ready; GraphQL gives the seconds in <code>extensions.retry_after_s</code>).</p>
<table><tr><th>code</th><th>status</th><th>meaning</th></tr>${errors}</table>
<p>GraphQL requests the server cannot run answer with these codes besides:</p><table><tr><th>code</th><th>meaning</th></tr>${graphqlErrors}</table></section>
</div>
<script src="${STATIC_PATH}/swagger-ui-bundle.js"></script>
<script>
(function () {
  var key = localStorage.getItem(${JSON.stringify(KEY_STORAGE)});
  var ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger',
    // Deep links put a link inside each operation's expand button (one control in another).
    deepLinking: false,
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    onComplete: function () {
      if (key) ui.preauthorizeApiKey(${JSON.stringify(scheme)}, key);
      // Swagger UI renders the server choice without a name.
      var servers = document.getElementById('servers');
      if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server');
      if (location.hash.indexOf('#error-') === 0) {
        var row = document.getElementById(location.hash.slice(1));
        if (row) row.scrollIntoView();
      }
    }
  });
})();
</script>
</body></html>`;
}

/** Serves Swagger UI's files from the installed package. */
export function docsStatic(): RequestHandler {
  const dir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  return express.static(dir, { index: false, fallthrough: false, maxAge: '7d' });
}

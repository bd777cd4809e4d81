import { ERROR_CODES, GRAPHQL_REQUEST_CODES } from '../domain/errors';

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

type Json = Record<string, unknown>;

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * A self-contained HTML reference rendered from the OpenAPI document (no
 * scripts, no remote assets), with an anchor per error code for the `type`
 * links of problem documents.
 */
export function docsPage(openapi: Json): string {
  const info = openapi.info as { title: string; version: string; description: string };
  const paths = openapi.paths as Record<string, Record<string, Json>>;
  const ops = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const params = (op.parameters as Json[] | undefined) ?? [];
      const rows = params
        .map((p) => {
          const schema = p.schema as Json;
          return `<tr><td><code>${esc(String(p.name))}</code></td><td>${esc(String(p.in))}</td><td>${esc(JSON.stringify(schema.type))}${schema.default !== undefined ? ` (default ${esc(JSON.stringify(schema.default))})` : ''}</td><td>${esc(text(p.description))}</td></tr>`;
        })
        .join('');
      const responses = Object.keys(op.responses as Json).join(', ');
      return `<section><h3><span class="m">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3><p><b>${esc(text(op.summary))}</b>. ${esc(text(op.description))}</p>${rows ? `<table><tr><th>name</th><th>in</th><th>type</th><th>meaning</th></tr>${rows}</table>` : ''}<p>Responses: ${esc(responses)}</p></section>`;
    }),
  );
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
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(info.title)} API reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}.m{background:#2a6;color:#fff;padding:0 .4em;border-radius:3px;font-size:.85em}section{border-top:1px solid #eee;margin-top:1rem}</style></head>
<body><h1>${esc(info.title)} API <small>${esc(info.version)}</small></h1><p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). GraphQL: <a href="/explorer">explorer</a> at <code>/graphql</code>.</p>
<h2>Routes</h2>${ops.join('')}
<h2 id="errors">Error codes</h2><p>Problem documents carry <code>code</code>, <code>status</code>, <code>detail</code> and, for invalid input, <code>errors</code> with each field and reason. GraphQL errors carry the same code in <code>extensions.code</code>. A 405 names the methods the path accepts in <code>Allow</code>; a 429 says in <code>Retry-After</code> when to retry.</p><table><tr><th>code</th><th>status</th><th>meaning</th></tr>${errors}</table>
<p>GraphQL requests the server cannot run answer with these codes besides:</p><table><tr><th>code</th><th>meaning</th></tr>${graphqlErrors}</table>
</body></html>`;
}

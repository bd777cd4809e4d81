import fs from 'node:fs';
import path from 'node:path';
import { webAppDir } from './web-app';

/** Where the web app keeps the API key in the browser; the explorer and the API reference share it. */
export const KEY_STORAGE = 'tiergraph.apiKey';

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GraphQL explorer · tiergraph</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto"><main><h1>GraphQL explorer</h1>
<p>The explorer is built with the web app. Run <code>npm run build</code> (or <code>npm start</code>, which builds it) and reload.</p>
<p>GraphQL answers at <code>POST /graphql</code> meanwhile; see the <a href="/docs">API reference</a>.</p></main></body></html>`;

/**
 * The operation the explorer opens with: it returns data on any loaded graph
 * (the most connected companies and their strongest suppliers), and asks for no
 * page larger than the server allows.
 */
export function exampleOperation(maxPageSize: number): string {
  const companies = Math.min(3, maxPageSize);
  const suppliers = Math.min(5, maxPageSize);
  return `# The most connected companies, with their strongest suppliers.
# Add name: "..." to search by name. Press the run button (or Ctrl+Enter).
query FindSuppliers {
  companies(limit: ${companies}) {
    results {
      vid
      name
      search_similarity
      suppliers(limit: ${suppliers}) {
        results {
          supplier { vid name country }
          relationship { confidence_score latest_relationship_date edge_ids }
        }
      }
    }
  }
}
`;
}

/**
 * The GraphQL explorer page (GraphiQL, built from web/ with the app into
 * dist/web, its assets served by the app's routes, so it works offline). The
 * page learns the key header's name and its example operation from the
 * server; the key itself stays in the browser.
 */
export function explorerPage(
  keyHeader: string,
  maxPageSize: number,
  dir: string | null = webAppDir(),
): string {
  const file = dir ? path.join(dir, 'explorer.html') : null;
  if (!file || !fs.existsSync(file)) return NOT_BUILT;
  // JSON in a script element: `<` escaped so the text can never close the element.
  const example = JSON.stringify(exampleOperation(maxPageSize)).replace(/</g, '\\u003c');
  return fs
    .readFileSync(file, 'utf8')
    .replace('%KEY_HEADER%', keyHeader)
    .replace('%EXAMPLE_OPERATION%', () => example);
}

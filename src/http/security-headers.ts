import { createHash } from 'node:crypto';

/**
 * The one inline style the app's pages take: the rule cytoscape (the tier map) writes into a style
 * element of its own before it draws. Should a new version write another, the map still draws, but
 * the browser reports the violation, which the browser tests fail on.
 */
const CYTOSCAPE_STYLE = '.__________cytoscape_container { position: relative; }';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The Content-Security-Policy of the analyst app's pages and files, which keep the API key in the
 * browser: scripts, styles and requests from this server only, so that markup slipped into a page
 * runs nothing and sends nothing elsewhere. The app has no inline script; its styles are in its
 * stylesheet or set through the DOM. The GraphQL explorer and the API reference are other pages,
 * with a policy of their own.
 */
export const APP_PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${sha256(CYTOSCAPE_STYLE)}`,
  // The pages' empty icon (`data:,`), which spares the browser a request for /favicon.ico.
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

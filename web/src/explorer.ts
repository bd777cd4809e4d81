import 'graphiql/graphiql.css';
import './explorer.css';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import type { Root } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import type { GraphiQLProps } from 'graphiql';
import type { ExecutionResult } from 'graphql';
import { KEY_HEADER, forgetKey, storedKey } from './api';
import { keyForm } from './key-form';

/**
 * The GraphQL explorer: GraphiQL, bundled with the app so nothing is fetched
 * from elsewhere. It uses the key the app stored on this origin, or asks for
 * it once and keeps it; the key travels only in a request header, added by the
 * fetcher, so it appears neither in an address nor in the headers editor.
 */
/** The operation to open with, from the server (it knows its page-size limit). */
const EXAMPLE = JSON.parse(document.getElementById('example-operation')?.textContent ?? '""') as string;

const root = document.getElementById('explorer')!;

/**
 * Runs operations with the stored key, unless the headers editor names the key header itself (in
 * any case): then the key written there goes instead, never both. When the server refuses the stored
 * key (revoked, or changed on the server), it is forgotten and asked for again, rather than sent with
 * every run, each refusal counting towards the lockout of the browser's address.
 */
function fetcherFor(key: string, reactRoot: Root): GraphiQLProps['fetcher'] {
  let refused = false;
  return async (params, options) => {
    const own = Object.keys(options?.headers ?? {}).some((n) => n.toLowerCase() === KEY_HEADER.toLowerCase());
    const res = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(own ? {} : { [KEY_HEADER]: key }),
        ...options?.headers,
      },
      body: JSON.stringify(params),
    });
    if (!own && (res.status === 401 || res.status === 403) && !refused) {
      refused = true;
      forgetKey();
      reactRoot.unmount();
      askForKey('The server no longer accepts the stored key. Enter another.');
    }
    return (await res.json()) as ExecutionResult;
  };
}

/** Names for the editors' input areas, which CodeMirror leaves unlabelled. */
const EDITOR_NAMES: [string, string][] = [
  ['.graphiql-query-editor', 'GraphQL operation'],
  ['.graphiql-editor-tool .graphiql-editor:not(.hidden)', 'Variables or headers (JSON)'],
  ['.graphiql-response', 'Response'],
];

/**
 * CodeMirror's hidden input areas carry no name; GraphiQL re-creates editors
 * as tabs change, so each new one is named as it appears.
 */
function labelEditors(container: HTMLElement): void {
  const fix = () => {
    for (const [selector, name] of EDITOR_NAMES) {
      for (const area of container.querySelectorAll<HTMLTextAreaElement>(`${selector} textarea`)) {
        if (!area.hasAttribute('aria-label')) area.setAttribute('aria-label', name);
      }
    }
    for (const area of container.querySelectorAll('textarea:not([aria-label])')) {
      area.setAttribute('aria-label', 'Editor');
    }
  };
  new MutationObserver(fix).observe(container, { childList: true, subtree: true });
  fix();
}

function start(key: string): void {
  root.replaceChildren();
  labelEditors(root);
  const reactRoot = createRoot(root);
  reactRoot.render(
    createElement(GraphiQL, {
      fetcher: fetcherFor(key, reactRoot),
      defaultQuery: EXAMPLE,
      defaultEditorToolsVisibility: false,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    }),
  );
}

/** Asks for the key once, checks it against the server, and keeps it where the app keeps it. */
function askForKey(why = ''): void {
  const { form, input } = keyForm({
    title: 'GraphQL explorer',
    intro: ['Enter your API key. It stays in this browser, shared with the app, until you forget it there.'],
    message: why,
    className: 'key-form',
    saved: start,
  });
  root.replaceChildren(form);
  input.focus();
}

const key = storedKey();
if (key) start(key);
else askForKey();

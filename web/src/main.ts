import './style.css';
import { ApiError, KeyRefused, forgetKey, storedKey, whenKeyRefused } from './api';
import { keyForm as keyFormOf } from './key-form';
import { h, replace } from './dom';
import { navigate, startRouter } from './router';
import { companyView } from './company';
import { searchView } from './search';
import { releaseMap, tierMapView } from './tiermap';

const main = document.getElementById('main')!;
const forget = document.getElementById('forget-key')!;

forget.addEventListener('click', () => {
  forgetKey();
  navigate('/', true);
});

function keyForm(message?: string): HTMLElement {
  return keyFormOf({
    title: 'Supply-chain relationships',
    intro: [
      'Enter your API key to search companies, read their suppliers and customers with evidence, and draw their supply network. ',
      'The key stays in this browser (never in an address) until you forget it.',
    ],
    message,
    className: 'card key-form',
    minLength: 16,
    saved: () => void route(new URL(location.href)),
  }).form;
}

/** The stored key was refused (by any request of the page): forgotten, and another asked for. */
function askForAnotherKey(e: KeyRefused): void {
  // No key to refuse: it was forgotten since the page was drawn, in this tab or another of this site.
  const forgotten = storedKey() === null;
  forgetKey();
  forget.hidden = true;
  document.title = 'API key · tiergraph';
  replace(
    main,
    keyForm(
      forgotten
        ? 'The API key was forgotten in this browser (in another tab, perhaps). Enter it again to go on.'
        : `The server refused the stored key (${e.message}). Enter another one.`,
    ),
  );
  main.querySelector('input')?.focus();
}
whenKeyRefused(askForAnotherKey);

/** Whether a view was drawn before: the first is the page's load, where focus is the browser's. */
let drawnOnce = false;

async function route(url: URL): Promise<void> {
  const key = storedKey();
  forget.hidden = key === null;
  if (!key) {
    document.title = 'API key · tiergraph';
    replace(main, keyForm());
    main.querySelector('input')?.focus();
    drawnOnce = true;
    return;
  }
  // An address that does not decode (`%E0%A4%A`) names no page: told as not found, below.
  const decoded = (p: string) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return null;
    }
  };
  const segments = url.pathname.split('/').filter(Boolean).map(decoded);
  const parts = segments.every((p) => p !== null) ? segments : null;
  // Each address is drawn into a container of its own: once another replaces it, whatever the
  // left view still draws (an answer that came late) lands in a detached element, unseen.
  const view = h('div', { class: 'view' });
  // A map left behind would keep its graph and listeners until the next map.
  releaseMap();
  replace(main, view);
  // After a move within the app, keyboard and screen-reader users start at the new content, not
  // at the top of the page (a view may move focus on, to its search box say).
  if (drawnOnce) main.focus();
  drawnOnce = true;
  try {
    if (parts === null) throw new ApiError(`The app has no page at ${url.pathname}.`, 404, 'NOT_FOUND');
    if (parts[0] === 'companies' && parts[1] && parts[2] === 'map' && parts.length === 3)
      await tierMapView(view, parts[1], url);
    else if (parts[0] === 'companies' && parts[1] && parts.length === 2)
      await companyView(view, parts[1], url);
    else if (parts.length === 0) await searchView(view, url);
    else throw new ApiError(`The app has no page at ${url.pathname}.`, 404, 'NOT_FOUND');
  } catch (e) {
    if (!view.isConnected) return;
    if (e instanceof KeyRefused) return askForAnotherKey(e);
    const notFound = e instanceof ApiError && e.code === 'NOT_FOUND';
    document.title = `${notFound ? 'Not found' : 'Something went wrong'} · tiergraph`;
    replace(
      view,
      h(
        'div',
        { class: 'card' },
        h('h1', {}, notFound ? 'Not found' : 'Something went wrong'),
        h('p', { role: 'alert' }, (e as Error).message),
        h('p', {}, h('a', { href: '/' }, 'Back to search')),
      ),
    );
  }
}

startRouter(route);

/** History routing: links inside the app change the address without a page load. */
type Render = (url: URL) => void | Promise<void>;

let render: Render = () => undefined;
/** The address last drawn, without its fragment. */
let drawn = '';

/**
 * How far down each history entry's page was scrolled, by the entry's key (kept in its state). The
 * browser's own restoring cannot serve: it scrolls at once, while the page is still being drawn and
 * too short, so Back to a long list landed at its top. Kept for the tab's session, so a reload too
 * goes back to where it was.
 */
const SCROLLED = 'tiergraph.scrolled';
const scrolled = new Map<string, number>();
let entry = '';

function entryOf(state: unknown): string | null {
  const key = (state as { entry?: unknown } | null)?.entry;
  return typeof key === 'string' ? key : null;
}

const newEntry = () => Math.random().toString(36).slice(2);

/**
 * Draws the current address; on a history move, only when more than its fragment moved (a
 * "Skip to content", or Back from one, is the browser's to scroll and focus). A new page starts at
 * its top; one gone back or forward to, once drawn, where it was left.
 */
function draw(force: boolean, moved = false): void {
  const url = new URL(location.href);
  const page = url.pathname + url.search;
  entry = entryOf(history.state) ?? entry;
  if (!force && page === drawn) return;
  drawn = page;
  if (!moved) {
    window.scrollTo(0, 0);
    void render(url);
    return;
  }
  const y = scrolled.get(entry);
  const done = render(url);
  if (y !== undefined)
    void Promise.resolve(done).then(() => {
      if (drawn === page) scrollOnceTall(page, y);
    });
}

/** How long the parts a page draws after it (lists, clusters) may move it from where it was left. */
const TALL_WAIT_MS = 10_000;

/**
 * Scrolls to `y`, and again each time the page changes size while it is elsewhere: its lists come after
 * it is drawn, and a part that grows then shrinks (a "Loading…" line, a section that turns out empty)
 * can pull it up after it reached `y`. Until the analyst scrolls or types, another page is drawn, or a
 * few seconds pass.
 */
function scrollOnceTall(page: string, y: number): void {
  window.scrollTo(0, y);
  const inputs = ['wheel', 'touchstart', 'keydown', 'mousedown'] as const;
  const stop = () => {
    observer.disconnect();
    clearTimeout(timer);
    for (const type of inputs) window.removeEventListener(type, stop);
  };
  const observer = new ResizeObserver(() => {
    if (drawn !== page) return stop();
    if (window.scrollY !== y) window.scrollTo(0, y);
  });
  observer.observe(document.body);
  const timer = setTimeout(stop, TALL_WAIT_MS);
  for (const type of inputs) window.addEventListener(type, stop, { passive: true });
}

export function startRouter(r: Render): void {
  render = r;
  history.scrollRestoration = 'manual';
  try {
    for (const [k, y] of JSON.parse(sessionStorage.getItem(SCROLLED) ?? '[]') as [string, number][])
      scrolled.set(k, y);
  } catch {
    // Nothing kept, or not readable: pages start at their tops.
  }
  const kept = entryOf(history.state);
  entry = kept ?? newEntry();
  if (kept === null) history.replaceState({ entry }, '');
  window.addEventListener('scroll', () => scrolled.set(entry, window.scrollY), { passive: true });
  window.addEventListener('pagehide', () => {
    try {
      sessionStorage.setItem(SCROLLED, JSON.stringify([...scrolled].slice(-50)));
    } catch {
      // Storage full or refused: only the restoring after a reload is lost.
    }
  });
  window.addEventListener('popstate', () => draw(false, true));
  document.addEventListener('click', (e) => {
    const a = (e.target as Element | null)?.closest('a');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
      return;
    if (a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    if (!isAppPath(a.pathname)) return;
    // A link within this page ("Skip to content") is the browser's to follow: it moves focus, no redraw.
    if (a.hash && a.pathname === location.pathname && a.search === location.search) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
  draw(true, true);
}

/** Paths the app draws itself; everything else (explorer, docs, API) is a page load. */
export function isAppPath(path: string): boolean {
  return path === '/' || path.startsWith('/companies/');
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState({ entry }, '', to);
  else history.pushState({ entry: newEntry() }, '', to);
  draw(true);
}

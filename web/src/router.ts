/** History routing: links inside the app change the address without a page load. */
type Render = (url: URL) => void | Promise<void>;

let render: Render = () => undefined;
/** The address last drawn, without its fragment. */
let drawn = '';

/**
 * Draws the current address; on a history move, only when more than its fragment moved (a
 * "Skip to content", or Back from one, is the browser's to scroll and focus).
 */
function draw(force: boolean): void {
  const url = new URL(location.href);
  const page = url.pathname + url.search;
  if (!force && page === drawn) return;
  drawn = page;
  void render(url);
}

export function startRouter(r: Render): void {
  render = r;
  window.addEventListener('popstate', () => draw(false));
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
  draw(true);
}

/** Paths the app draws itself; everything else (explorer, docs, API) is a page load. */
export function isAppPath(path: string): boolean {
  return path === '/' || path.startsWith('/companies/');
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  draw(true);
}

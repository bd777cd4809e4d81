/** History routing: links inside the app change the address without a page load. */
type Render = (url: URL) => void | Promise<void>;

let render: Render = () => undefined;

export function startRouter(r: Render): void {
  render = r;
  window.addEventListener('popstate', () => void render(new URL(location.href)));
  document.addEventListener('click', (e) => {
    const a = (e.target as Element | null)?.closest('a');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
      return;
    if (a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    if (!isAppPath(a.pathname)) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
  void render(new URL(location.href));
}

/** Paths the app draws itself; everything else (explorer, docs, API) is a page load. */
export function isAppPath(path: string): boolean {
  return path === '/' || path.startsWith('/companies/');
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  void render(new URL(location.href));
}

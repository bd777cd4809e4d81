/**
 * The address a link made from data may lead to: an http: or https: URL (resolved against `base`
 * when one is given), as the browser reads it; null for anything else, such as `javascript:`,
 * `data:` or a bare word, which the app shows as text rather than as a link. The importer takes
 * only web addresses, but a seed or a graph database loaded by other means is not checked, and one
 * `javascript:` link clicked would run script on this origin, which holds the API key.
 */
export function webHref(value: string | null | undefined, base?: string): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = base === undefined ? new URL(value) : new URL(value, base);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

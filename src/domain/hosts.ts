/** Lower-cased hosts of domains and website URLs, without `www.`. */
export function hostsOf(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    let host = v.trim().toLowerCase();
    if (host.includes('://')) {
      try {
        host = new URL(host).hostname;
      } catch {
        continue;
      }
    }
    host = host.replace(/\/.*$/, '').replace(/^www\./, '');
    if (host) out.add(host);
  }
  return [...out];
}

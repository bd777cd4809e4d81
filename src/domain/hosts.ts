/** A service's address (a database URI) as a message may show it: without a user and password written in. */
export function withoutCredentials(uri: string): string {
  return uri.replace(/\/\/[^@/]*@/, '//');
}

/** A URL's hostname as an address is written on its own: an IPv6 address without its brackets. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

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

/**
 * Which callback URLs the service may post to. It makes outbound requests on a
 * client's behalf, so only hosts an operator listed are reachable: otherwise
 * any API key holder could probe the internal network. Pure rules over strings
 * and URLs, read by the settings (to refuse a malformed list at start-up), by
 * job submission and again at delivery time.
 */

import { bareHost } from './hosts';
import { isPublicAddress } from './public-address';

/** Longest callback URL accepted; keeps stored run requests and logs bounded. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/** One entry of the callback host allow-list. */
export interface HostRule {
  /**
   * Normalised host: lower case, IDN in punycode, IPv4 in dotted decimal, IPv6
   * in brackets, no trailing dot. For a wildcard rule, the parent domain.
   */
  host: string;
  /** Written as `*.host`: matches any subdomain of `host`, never `host` itself. */
  wildcard: boolean;
  /** Port the URL must use (explicit or the scheme's default); null accepts any port. */
  port: number | null;
}

// Labels after normalisation by the URL parser (IDN already in punycode). The
// underscore is tolerated because some internal DNS names carry one.
const DNS_NAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;
// What the WHATWG URL parser turns any IPv4 form (hex, short, ...) into.
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * Normalises a host the way the URL parser does, so that a rule and a URL
 * that name the same host compare equal as plain strings (`EXAMPLE.com.`,
 * `bücher.example`, `0x7f.1`, `[0:0::1]` all have one spelling afterwards).
 * Returns null when the text is not a host.
 */
function normaliseHost(text: string): string | null {
  // Anything that would make the parser read a path, userinfo, port or query
  // into the text is not a bare host.
  if (text === '' || /[\s/\\?#@*%]/.test(text)) return null;
  let parsed: URL;
  try {
    parsed = new URL(`https://${text}/`);
  } catch {
    return null;
  }
  if (parsed.port !== '' || parsed.pathname !== '/') return null;
  return stripTrailingDot(parsed.hostname);
}

// `example.com.` is the fully qualified spelling of `example.com`; both reach the same server.
function stripTrailingDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || IPV4.test(host);
}

function parsePort(text: string, entry: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new Error(`callback host "${entry}": port must be a number from 1 to 65535`);
  }
  return Number(text);
}

const HOST_PATTERN_HINT = 'expected a host name, *.domain, IPv4 or [IPv6] address, optionally with :port';

function parseHostRule(entry: string): HostRule {
  // A scheme, path, query or userinfo means a URL was pasted where a host belongs.
  if (/[\s/\\?#@]/.test(entry)) throw new Error(`callback host "${entry}": ${HOST_PATTERN_HINT}`);
  let rest = entry.toLowerCase();
  let wildcard = false;
  if (rest.startsWith('*.')) {
    wildcard = true;
    rest = rest.slice(2);
  }

  let hostText: string;
  let port: number | null = null;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) throw new Error(`callback host "${entry}": IPv6 address lacks its closing bracket`);
    hostText = rest.slice(0, close + 1);
    const after = rest.slice(close + 1);
    if (after.startsWith(':')) port = parsePort(after.slice(1), entry);
    else if (after !== '')
      throw new Error(`callback host "${entry}": unexpected text after the IPv6 address`);
  } else {
    const colons = rest.split(':').length - 1;
    // A bare IPv6 address is ambiguous with host:port, so brackets are required.
    if (colons > 1) throw new Error(`callback host "${entry}": write IPv6 addresses in brackets`);
    const colon = rest.indexOf(':');
    hostText = colon < 0 ? rest : rest.slice(0, colon);
    if (colon >= 0) port = parsePort(rest.slice(colon + 1), entry);
  }

  const host = normaliseHost(hostText);
  if (host === null || (!host.startsWith('[') && !DNS_NAME.test(host))) {
    throw new Error(`callback host "${entry}": ${HOST_PATTERN_HINT}`);
  }
  if (wildcard && isIpLiteral(host)) {
    throw new Error(`callback host "${entry}": wildcards apply to domain names, not IP addresses`);
  }
  return { host, wildcard, port };
}

/**
 * Parses the callback host allow-list setting: comma-separated patterns, each
 * an exact host (`hooks.example.com`), a subdomain wildcard
 * (`*.example.com`, which leaves out `example.com` itself), an IPv4 address or
 * a bracketed IPv6 address, any of them optionally followed by `:port` (no
 * port: any port). Matching ignores case. Blank entries are skipped; an empty
 * list means callbacks are disabled.
 *
 * @throws Error naming the first malformed entry, so a bad setting stops start-up
 *   rather than silently rejecting every callback.
 */
export function parseCallbackHosts(text: string): HostRule[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map(parseHostRule);
}

function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'http:' ? 80 : 443;
}

function ruleMatches(rule: HostRule, host: string, port: number): boolean {
  if (rule.port !== null && rule.port !== port) return false;
  if (!rule.wildcard) return host === rule.host;
  // An IP address never belongs to a domain, whatever its digits look like.
  if (isIpLiteral(host)) return false;
  const suffix = `.${rule.host}`;
  return host.length > suffix.length && host.endsWith(suffix) && !host.startsWith('.');
}

/**
 * Decides whether a client-supplied callback URL may be used. On refusal the
 * reason is one sentence meant for the client (it is reported as a field
 * error on `body.callback_url`).
 *
 * @param opts.allowHttp accept plain `http:` as well as `https:` (for local
 *   development and receivers inside a trusted network).
 * @param opts.publicOnly refuse an IP address written in the URL that is not a
 *   public one (a host name's addresses are checked when it is resolved, at
 *   each delivery attempt).
 */
export function checkCallbackUrl(
  url: string,
  rules: HostRule[],
  opts: { allowHttp: boolean; publicOnly?: boolean },
): { ok: true; url: URL } | { ok: false; reason: string } {
  if (rules.length === 0) return { ok: false, reason: 'Callbacks are not enabled on this server.' };
  if (url.length > MAX_CALLBACK_URL_LENGTH) {
    return { ok: false, reason: `The callback URL is longer than ${MAX_CALLBACK_URL_LENGTH} characters.` };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'The callback URL is not a valid absolute URL.' };
  }
  // Percent-encoding can make the normalised form longer than what was sent.
  if (parsed.href.length > MAX_CALLBACK_URL_LENGTH) {
    return { ok: false, reason: `The callback URL is longer than ${MAX_CALLBACK_URL_LENGTH} characters.` };
  }
  if (parsed.protocol !== 'https:' && !(opts.allowHttp && parsed.protocol === 'http:')) {
    return {
      ok: false,
      reason: opts.allowHttp
        ? 'The callback URL must use https or http.'
        : 'The callback URL must use https.',
    };
  }
  // Credentials in a URL end up in logs and run records; receivers authenticate by the signature instead.
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'The callback URL must not contain a user name or password.' };
  }
  // A fragment is never sent to the server, so it can only be a mistake. `url.hash` is empty
  // for a bare trailing `#`, hence the look at the serialised form.
  if (parsed.href.includes('#')) {
    return { ok: false, reason: 'The callback URL must not contain a fragment (#...).' };
  }
  const host = stripTrailingDot(parsed.hostname);
  const port = effectivePort(parsed);
  if (!rules.some((rule) => ruleMatches(rule, host, port))) {
    return {
      ok: false,
      reason: `The callback host ${parsed.host} is not in this server's list of allowed callback hosts.`,
    };
  }
  if (opts.publicOnly && isIpLiteral(host) && !isPublicAddress(bareHost(host))) {
    return {
      ok: false,
      reason: `The callback host ${parsed.host} is not a public address, and this server posts callbacks to public addresses only.`,
    };
  }
  return { ok: true, url: parsed };
}

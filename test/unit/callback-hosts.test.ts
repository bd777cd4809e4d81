import { checkCallbackUrl, parseCallbackHosts } from '../../src/domain/callback-hosts';
import type { HostRule } from '../../src/domain/callback-hosts';
import { isPublicAddress } from '../../src/domain/public-address';

describe('parseCallbackHosts', () => {
  it('parses exact, wildcard, port, case and IPv6 entries, skipping blanks', () => {
    expect(parseCallbackHosts(' Hooks.Example.COM , *.example.org:8443,, [::1]:9000, 10.0.0.5 ,')).toEqual([
      { host: 'hooks.example.com', wildcard: false, port: null },
      { host: 'example.org', wildcard: true, port: 8443 },
      { host: '[::1]', wildcard: false, port: 9000 },
      { host: '10.0.0.5', wildcard: false, port: null },
    ]);
  });

  it('returns no rules for an empty setting', () => {
    expect(parseCallbackHosts('')).toEqual([]);
    expect(parseCallbackHosts(' , ')).toEqual([]);
  });

  it('normalises IDN, trailing dots and IPv6 spellings', () => {
    expect(parseCallbackHosts('bücher.example., [0:0::1]').map((r) => r.host)).toEqual([
      'xn--bcher-kva.example',
      '[::1]',
    ]);
  });

  it.each([
    ['https://hooks.example.com', /host name/],
    ['hooks.example.com/path', /host name/],
    ['user@hooks.example.com', /host name/],
    ['*', /host name/],
    ['a.*.example.com', /host name/],
    ['*.*.example.com', /host name/],
    ['hooks.example.com:0', /port/],
    ['hooks.example.com:99999', /port/],
    ['hooks.example.com:', /port/],
    ['::1', /brackets/],
    ['[::1', /closing bracket/],
    ['[::1]x', /after the IPv6/],
    ['*.[::1]', /not IP addresses/],
    ['*.10.0.0.1', /not IP addresses/],
  ])('rejects %s', (entry, message) => {
    expect(() => parseCallbackHosts(`ok.example.com,${entry}`)).toThrow(message);
  });
});

describe('checkCallbackUrl', () => {
  const rules = parseCallbackHosts('hooks.example.com, *.example.org, api.example.net:8443, [::1]:9000');
  const check = (url: string, allowHttp = false): ReturnType<typeof checkCallbackUrl> =>
    checkCallbackUrl(url, rules, { allowHttp });
  const reason = (url: string, allowHttp = false): string => {
    const r = check(url, allowHttp);
    return r.ok ? 'accepted' : r.reason;
  };

  it('accepts an exact host on any port when the rule has none', () => {
    const r = check('https://hooks.example.com/done?job=1');
    expect(r.ok && r.url.href).toBe('https://hooks.example.com/done?job=1');
    expect(check('https://hooks.example.com:9443/x').ok).toBe(true);
    expect(reason('https://other.example.com/x')).toMatch(/not in this server's list/);
  });

  it('matches case-insensitively and ignores a trailing dot', () => {
    expect(check('https://HOOKS.Example.Com./x').ok).toBe(true);
  });

  it('lets a wildcard match subdomains at any depth but not the domain itself', () => {
    expect(check('https://a.example.org/x').ok).toBe(true);
    expect(check('https://a.b.example.org/x').ok).toBe(true);
    expect(reason('https://example.org/x')).toMatch(/not in this server's list/);
    expect(reason('https://badexample.org/x')).toMatch(/not in this server's list/);
    expect(reason('https://example.org.evil.com/x')).toMatch(/not in this server's list/);
  });

  it('requires the port of a rule that names one, counting the default port', () => {
    expect(check('https://api.example.net:8443/x').ok).toBe(true);
    expect(reason('https://api.example.net/x')).toMatch(/not in this server's list/);
    expect(reason('https://api.example.net:8444/x')).toMatch(/not in this server's list/);
    const on443 = parseCallbackHosts('api.example.net:443');
    expect(checkCallbackUrl('https://api.example.net/x', on443, { allowHttp: false }).ok).toBe(true);
    const on80 = parseCallbackHosts('api.example.net:80');
    expect(checkCallbackUrl('http://api.example.net/x', on80, { allowHttp: true }).ok).toBe(true);
    expect(checkCallbackUrl('https://api.example.net/x', on80, { allowHttp: true }).ok).toBe(false);
  });

  it('matches IPv6 hosts in any spelling', () => {
    expect(check('https://[::1]:9000/x').ok).toBe(true);
    expect(check('https://[0:0:0:0:0:0:0:1]:9000/x').ok).toBe(true);
    expect(reason('https://[::2]:9000/x')).toMatch(/not in this server's list/);
    expect(reason('https://[::1]:9001/x')).toMatch(/not in this server's list/);
  });

  it('accepts http only when allowed and refuses other schemes', () => {
    expect(reason('http://hooks.example.com/x')).toBe('The callback URL must use https.');
    expect(check('http://hooks.example.com/x', true).ok).toBe(true);
    expect(reason('ftp://hooks.example.com/x', true)).toBe('The callback URL must use https or http.');
    expect(reason('javascript:alert(1)')).toBe('The callback URL must use https.');
    expect(reason('file:///etc/passwd')).toBe('The callback URL must use https.');
  });

  it('refuses user info, fragments, relative and overlong URLs', () => {
    expect(reason('https://user:pass@hooks.example.com/x')).toMatch(/user name or password/);
    expect(reason('https://user@hooks.example.com/x')).toMatch(/user name or password/);
    expect(reason('https://hooks.example.com/x#part')).toMatch(/fragment/);
    expect(reason('https://hooks.example.com/x#')).toMatch(/fragment/);
    expect(reason('/relative/path')).toBe('The callback URL is not a valid absolute URL.');
    expect(reason('not a url')).toBe('The callback URL is not a valid absolute URL.');
    const base = 'https://hooks.example.com/';
    expect(check(base + 'a'.repeat(2048 - base.length)).ok).toBe(true);
    expect(reason(base + 'a'.repeat(2049 - base.length))).toMatch(/longer than 2048/);
  });

  it('says callbacks are off when the allow-list is empty', () => {
    const r = checkCallbackUrl('https://hooks.example.com/x', [], { allowHttp: false });
    expect(r).toEqual({ ok: false, reason: 'Callbacks are not enabled on this server.' });
  });

  it('never lets a wildcard rule match an IP address', () => {
    const numeric: HostRule[] = [{ host: '0.1', wildcard: true, port: null }];
    expect(checkCallbackUrl('https://10.0.0.1/x', numeric, { allowHttp: false }).ok).toBe(false);
  });

  it('refuses an allowed IP address that is not public when told to post to public addresses only', () => {
    const listed = parseCallbackHosts('10.0.0.5, [::1], [fd00::7], 8.8.8.8, hooks.example.com');
    const publicOnly = (url: string) => {
      const r = checkCallbackUrl(url, listed, { allowHttp: false, publicOnly: true });
      return r.ok ? 'accepted' : r.reason;
    };
    expect(publicOnly('https://10.0.0.5/x')).toBe(
      'The callback host 10.0.0.5 is not a public address, and this server posts callbacks to public addresses only.',
    );
    expect(publicOnly('https://[::1]/x')).toMatch(/^The callback host \[::1\] is not a public address/);
    expect(publicOnly('https://[fd00::7]/x')).toMatch(/not a public address/);
    expect(publicOnly('https://8.8.8.8/x')).toBe('accepted');
    // A name's addresses are checked when it is resolved, at each delivery attempt.
    expect(publicOnly('https://hooks.example.com/x')).toBe('accepted');
    expect(checkCallbackUrl('https://10.0.0.5/x', listed, { allowHttp: false }).ok).toBe(true);
  });
});

describe('isPublicAddress', () => {
  it.each([
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::127.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '2002:c0a8:101::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '2001:db8::1',
    '192.88.99.1',
    '64:ff9b:1::a00:1',
    'fec0::1',
    'not an address',
    'localhost',
  ])('calls %s not public', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each(['8.8.8.8', '172.32.0.1', '1.1.1.1', '::ffff:8.8.8.8', '64:ff9b::8.8.4.4', '2606:4700::1111'])(
    'calls %s public',
    (address) => expect(isPublicAddress(address)).toBe(true),
  );
});

import { webHref } from '../../web/src/links';

describe('webHref: the addresses from data the app makes links of', () => {
  it('takes http and https addresses, as the browser reads them', () => {
    expect(webHref('https://www.basalt.in')).toBe('https://www.basalt.in/');
    expect(webHref('http://example.com/a?b=c#d')).toBe('http://example.com/a?b=c#d');
    expect(webHref('  HTTPS://Example.COM/x ')).toBe('https://example.com/x');
  });

  it('refuses every other scheme, however it is written', () => {
    for (const bad of [
      'javascript:alert(document.domain)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      '\u0000javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://example.com/1',
      'ftp://example.com/',
    ])
      expect([bad, webHref(bad)]).toEqual([bad, null]);
  });

  it('refuses what is no absolute address, unless a base is given to resolve it against', () => {
    for (const bad of ['www.example.com', '/companies/x', '//example.com/', '', null, undefined])
      expect([bad, webHref(bad)]).toEqual([bad, null]);
    expect(webHref('/downloads/a.csv?expires=1', 'http://localhost:4141/companies/x')).toBe(
      'http://localhost:4141/downloads/a.csv?expires=1',
    );
    expect(webHref('javascript:alert(1)', 'http://localhost:4141/')).toBeNull();
  });
});

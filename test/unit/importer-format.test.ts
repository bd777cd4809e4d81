import {
  DATE_RANGE,
  DateParser,
  ValueError,
  checkHsCode,
  checkIdentifierValue,
  checkListElement,
  checkName,
  checkPhone,
  checkText,
  checkUrl,
  isinCheckDigit,
  isoOf,
  leiCheckDigits,
  leiChecksumOk,
  normBoolean,
  normDomain,
  normInteger,
  normList,
  normWebsite,
  parseConfidence,
  parseIsoDate,
  urlHost,
} from '../../src/import/format';
import { detach, memoize } from '../../src/memoize';
import { Rng, base32, feistel, opaqueId, permute30 } from '../../src/demo/random';
import { AsciiIndex, StringIndex, fingerprint } from '../../src/import/string-index';

describe('dates', () => {
  it('parses plain dates and ISO date-times with zones to UTC', () => {
    expect(isoOf(parseIsoDate('2021-03-04'))).toBe('2021-03-04T00:00:00Z');
    expect(isoOf(parseIsoDate('2021-03-04T10:20:30Z'))).toBe('2021-03-04T10:20:30Z');
    expect(isoOf(parseIsoDate('2021-03-04T01:00:00+02:00'))).toBe('2021-03-03T23:00:00Z');
    expect(isoOf(parseIsoDate('2021-03-04T01:00-0530'))).toBe('2021-03-04T06:30:00Z');
    expect(isoOf(parseIsoDate('2021-03-04T01:00:00.123456+01'))).toBe('2021-03-04T00:00:00.123Z');
    expect(isoOf(parseIsoDate('2024-02-29'))).toBe('2024-02-29T00:00:00Z');
  });

  it('refuses impossible or zone-less values', () => {
    for (const v of [
      '2023-02-29',
      '2021-13-01',
      '2021-00-10',
      '2021-04-31',
      '2021-03-04T24:00:00Z',
      '2021-03-04T10:00:00',
      '2021-3-4',
      '04.03.2021',
      '2021-03-04T10:00:00+15:00',
    ]) {
      expect(Number.isNaN(parseIsoDate(v))).toBe(true);
    }
  });

  it('checks ranges and caches by text', () => {
    const p = new DateParser();
    expect(p.parse('1999-12-31', DATE_RANGE)).toBe(Date.UTC(1999, 11, 31));
    expect(p.parse('1999-12-31', DATE_RANGE)).toBe(Date.UTC(1999, 11, 31));
    expect(() => p.parse('1899-12-31', DATE_RANGE)).toThrow('is outside 1900-01-01 to 2100-12-31');
    expect(() => p.parse('2021-02-30', DATE_RANGE)).toThrow(ValueError);
    expect(() => p.parse('yesterday', DATE_RANGE)).toThrow('is not a date');
  });

  it('agrees with Date for every day of a few centuries', () => {
    const p = new DateParser();
    for (let d = Date.UTC(1900, 0, 1); d <= Date.UTC(2100, 11, 31); d += 86400000 * 13) {
      const text = new Date(d).toISOString().slice(0, 10);
      expect(p.parse(text, DATE_RANGE)).toBe(d);
    }
  });
});

describe('values', () => {
  it('normalises booleans, integers and confidences', () => {
    expect(['true', 'TRUE', '1', 'yes', 'Yes'].map(normBoolean)).toEqual(Array(5).fill('true'));
    expect(['false', 'False', '0', 'no', 'NO'].map(normBoolean)).toEqual(Array(5).fill('false'));
    expect(() => normBoolean('y')).toThrow(ValueError);
    expect(normInteger('007')).toBe('7');
    expect(normInteger('-3')).toBe('-3');
    expect(() => normInteger('1.5')).toThrow('is not an integer');
    expect(() => normInteger('99999999999999999')).toThrow(ValueError);
    expect(parseConfidence('1')).toBe(1);
    expect(parseConfidence('.5')).toBe(0.5);
    expect(parseConfidence('1e-3')).toBe(0.001);
    for (const bad of ['0', '-0.1', '1.0001', 'NaN', 'Infinity', '0x1', '']) {
      expect(() => parseConfidence(bad)).toThrow(ValueError);
    }
  });

  it('checks domains, URLs and HS codes', () => {
    expect(normDomain('Example.COM')).toBe('example.com');
    expect(normDomain('xn--mller-kva.de')).toBe('xn--mller-kva.de');
    for (const bad of ['localhost', 'a_b.com', '-a.com', 'a..com', 'münchen.de']) {
      expect(() => normDomain(bad)).toThrow(ValueError);
    }
    expect(checkUrl('https://example.com/a?b=1#c')).toBe('https://example.com/a?b=1#c');
    expect(checkUrl('https://example.com/päth')).toBe('https://example.com/päth');
    expect(urlHost('https://News.Example.com:8080/x')).toBe('news.example.com');
    for (const bad of [
      'example.com',
      'ftp://example.com',
      'https://exa mple.com',
      'https://',
      'http://acme.com:99999/',
      'http://...',
      'http://a..b/',
      'http://-a.com/',
    ]) {
      expect(() => checkUrl(bad)).toThrow(ValueError);
    }
    for (const ok of [
      'http://acme.com:65535/x',
      'http://[::1]:8080/',
      'https://münchen.de/',
      'http://10.0.0.1/',
    ])
      expect(checkUrl(ok)).toBe(ok);
    for (const ok of ['84', '8471', '847130', '8471.30', '8471.30.10']) expect(checkHsCode(ok)).toBe(ok);
    for (const bad of ['8', '84x', '8471.3', '12345678901'])
      expect(() => checkHsCode(bad)).toThrow(ValueError);
  });

  it('counts characters as code points, as the documented limits do', () => {
    // 300 characters of two UTF-16 units each: within the 500 a name may have.
    expect(checkName('😀'.repeat(300))).toBe('😀'.repeat(300));
    expect(() => checkName('😀'.repeat(501))).toThrow('longer than 500 characters');
    expect(checkText('é😀'.repeat(5000))).toHaveLength(15000);
    expect(() => checkText('😀'.repeat(10001))).toThrow(ValueError);
  });

  it('takes phone numbers of 3 to 40 characters, the + included, with a digit', () => {
    for (const ok of ['+12', '112', '(030) 123-45/6', '+1 555 0100', `+${'1'.repeat(39)}`])
      expect(checkPhone(ok)).toBe(ok);
    for (const bad of ['(((', '12', `+${'1'.repeat(40)}`, ' 123', '+-12', 'call 123'])
      expect(() => checkPhone(bad)).toThrow(ValueError);
  });

  it('splits, checks and de-duplicates lists', () => {
    expect(normList('a.com', normDomain)).toEqual(['a.com']);
    expect(normList('a.com| B.com |a.com', normDomain)).toEqual(['a.com', 'b.com']);
    expect(() => normList('a.com|', normDomain)).toThrow('empty element');
  });

  it('refuses list elements that a staged list cannot hold', () => {
    for (const ok of ['a.com', '8471.30', 'https://x.com/a%2Cb', 'über'])
      expect(checkListElement(ok)).toBe(ok);
    expect(() => checkListElement('a,b')).toThrow('"a,b" cannot be a list element: it holds ","');
    expect(() => checkListElement('[x]')).toThrow('it holds "["');
    expect(() => checkListElement("it's")).toThrow(`it holds "'"`);
    expect(() => checkListElement('a\\b')).toThrow('it holds "\\\\"');
    expect(() => checkListElement('a\u0001')).toThrow('it holds control character U+0001');
    expect(() => checkListElement(' a')).toThrow('it starts or ends with white space');
    expect(() => checkListElement('')).toThrow('it is empty');
    expect(() => normList('a.com|x', (v) => (v === 'x' ? 'x}' : v))).toThrow('"x}" cannot be a list element');
  });

  it('percent-encodes in website URLs what a staged list cannot hold', () => {
    expect(normWebsite('https://www.acme.com/en/')).toBe('https://www.acme.com/en/');
    expect(normWebsite(`https://acme.com/a,b'c"d[e]{f}\\g?q=[1]#x,y`)).toBe(
      'https://acme.com/a%2Cb%27c%22d%5Be%5D%7Bf%7D%5Cg?q=%5B1%5D#x%2Cy',
    );
    expect(() => normWebsite('http://[::1]/x')).toThrow('cannot be a list element');
    expect(() => normWebsite('https://us,er@acme.com/')).toThrow('before its path');
    expect(() => normWebsite('ftp://acme.com/')).toThrow('is not an http(s) URL');
  });

  it('copies cached values so that they hold no file chunk', () => {
    const chunk = `${'x'.repeat(100)},some-long-value-here`;
    const v = chunk.split(',')[1]!;
    expect(detach(v)).toBe(v);
    expect(detach('')).toBe('');
    expect(detach('lone \ud800')).toBe('lone \ud800');
  });

  it('computes and checks LEI and ISIN check digits', () => {
    expect(leiChecksumOk('HWUPKR0MPOU8FGXBT394')).toBe(true);
    expect(leiChecksumOk('HWUPKR0MPOU8FGXBT395')).toBe(false);
    expect(leiCheckDigits('HWUPKR0MPOU8FGXBT3')).toBe('94');
    expect(isinCheckDigit('US037833100')).toBe('5');
    expect(isinCheckDigit('DE000BAY001')).toBe('7');
    expect(checkIdentifierValue('ISIN', 'DE000BAY0017')).toBe('DE000BAY0017');
    expect(checkIdentifierValue('PermID', '4295905573')).toBe('4295905573');
    expect(checkIdentifierValue('Wikidata', 'Q312')).toBe('Q312');
    expect(() => checkIdentifierValue('PermID', '12a')).toThrow(ValueError);
    expect(() => checkIdentifierValue('Wikidata', 'Q0')).toThrow(ValueError);
  });

  it('memoizes successful checks only', () => {
    let calls = 0;
    const m = memoize((v) => {
      calls++;
      if (v === 'bad') throw new ValueError('bad');
      return v.toUpperCase();
    }, 2);
    expect([m('a'), m('a'), m('b'), m('c'), m('a')]).toEqual(['A', 'A', 'B', 'C', 'A']);
    expect(calls).toBe(4);
    expect(() => m('bad')).toThrow('bad');
    expect(() => m('bad')).toThrow('bad');
  });
});

describe('indexes', () => {
  it('number strings densely and find them again', () => {
    for (const idx of [new StringIndex(), new AsciiIndex()]) {
      for (let i = 0; i < 5000; i++) {
        expect(idx.get(`id-${i}`)).toBe(-1);
        expect(idx.commit(`id-${i}`)).toBe(i);
      }
      expect(idx.size).toBe(5000);
      for (let i = 0; i < 5000; i += 7) expect(idx.get(`id-${i}`)).toBe(i);
      expect(idx.get('id-5000')).toBe(-1);
      expect(idx.key(4321)).toBe('id-4321');
    }
    expect(() => new StringIndex().commit('x')).toThrow();
  });

  it('fingerprints tell different strings apart', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100000; i++) seen.add(fingerprint(`v${i}`));
    expect(seen.size).toBe(100000);
    // The same string gives the same number in every process (the value is pinned, not recomputed).
    expect(fingerprint('abc')).toBe(2618215890927507);
    expect(Number.isSafeInteger(fingerprint('some evidence id'))).toBe(true);
  });
});

describe('random', () => {
  it('repeats a stream for the same seed and differs across seeds and streams', () => {
    const take = (r: Rng): number[] => Array.from({ length: 5 }, () => r.u32());
    expect(take(new Rng(1, 2))).toEqual(take(new Rng(1, 2)));
    expect(take(new Rng(1, 2))).not.toEqual(take(new Rng(1, 3)));
    expect(take(new Rng(1, 2))).not.toEqual(take(new Rng(2, 2)));
    const r = new Rng(9);
    for (let i = 0; i < 1000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
    }
  });

  it('builds ids from bijections, so they never collide', () => {
    const a = new Set<number>();
    for (let i = 0; i < 100000; i++) a.add(permute30(i, 12345));
    expect(a.size).toBe(100000);
    const b = new Set<number>();
    for (let i = 0; i < 100000; i++) b.add(feistel(i * 40503, 20, 777));
    expect(b.size).toBe(100000);
    expect(opaqueId('c', 5, 1)).toMatch(/^c[0-9a-z]{6}$/);
    expect(base32(2 ** 44 - 1, 9)).toBe('fzzzzzzzz');
  });
});

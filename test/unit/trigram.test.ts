import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  float4Ratio,
  formatFloat4,
  similarity,
  similarityOfSets,
  trigramSet,
  trigramSetView,
} from '../../src/domain/trigram';

/** test/fixtures/pg-trgm-similarity.json: values printed by a real PostgreSQL 15 (see its note). */
interface Fixture {
  note: string;
  server: { version: string; encoding: string; lc_ctype: string };
  pairs: { a: string; b: string; similarity: number; known_difference?: string; expected_here?: number }[];
  trigrams: Record<string, string[]>;
  float4_text: [number, number, string][];
  word_char_ranges: [number, number][];
  word_char_count: number;
  single_code_point_sha256: string;
}

const fixture = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'pg-trgm-similarity.json'), 'utf8'),
) as Fixture;

/** A show_trgm() element as a trigram id: hashed ones print as 0x + 6 hex digits, others as 3 bytes. */
function idOf(shown: string): number {
  if (shown.length === 8 && shown.startsWith('0x')) return parseInt(shown.slice(2), 16);
  return (shown.charCodeAt(0) << 16) | (shown.charCodeAt(1) << 8) | shown.charCodeAt(2);
}

const hex6 = (id: number): string => id.toString(16).padStart(6, '0');

describe('similarity matches PostgreSQL pg_trgm', () => {
  it('was taken from PostgreSQL 15 with UTF-8 and C.UTF-8', () => {
    expect(fixture.server.version).toMatch(/^15\./);
    expect(fixture.server.encoding).toBe('UTF8');
    expect(fixture.server.lc_ctype).toBe('C.UTF-8');
    expect(fixture.pairs.length).toBeGreaterThanOrEqual(80);
  });

  it.each(fixture.pairs.map((p) => [p.a, p.b, p] as const))('similarity(%j, %j)', (a, b, row) => {
    if (row.known_difference !== undefined) {
      // A documented divergence: the value here is pinned so that a change is noticed either way.
      expect(formatFloat4(similarity(a, b))).toBe(row.expected_here);
      expect(row.expected_here).not.toBe(row.similarity);
      return;
    }
    expect(formatFloat4(similarity(a, b))).toBe(row.similarity);
    expect(similarity(b, a)).toBe(similarity(a, b));
  });

  it.each(Object.entries(fixture.trigrams))('trigramSet(%j) equals show_trgm', (text, shown) => {
    const expected = shown.map(idOf).sort((x, y) => x - y);
    expect(Array.from(trigramSet(text))).toEqual(expected);
  });

  it('classifies and lower-cases every code point as the server does', () => {
    const ranges = fixture.word_char_ranges;
    const hash = createHash('sha256');
    let next = 0;
    let wordChars = 0;
    const misclassified: string[] = [];
    for (let cp = 1; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      while (next < ranges.length && ranges[next]![1] < cp) next++;
      const range = ranges[next];
      const isWord = range !== undefined && range[0] <= cp;
      const set = trigramSet(String.fromCodePoint(cp));
      if (set.length > 0 !== isWord) misclassified.push(cp.toString(16));
      if (set.length > 0) {
        wordChars++;
        hash.update(`${cp.toString(16)}:${Array.from(set, hex6).join(',')}\n`);
      }
    }
    expect(misclassified).toEqual([]);
    expect(wordChars).toBe(fixture.word_char_count);
    expect(hash.digest('hex')).toBe(fixture.single_code_point_sha256);
  });

  it('gives the documented examples', () => {
    expect(formatFloat4(similarity('boeing', 'Boeing Co'))).toBe(0.7);
    expect(similarity('boeing', 'Boeing Co')).toBe(0.699999988079071);
    expect(similarity('Boeing Co.', 'Boeing Co')).toBe(1);
  });

  it('scores 0 when either side has no trigrams, like pg', () => {
    expect(similarity('', '')).toBe(0);
    expect(similarity('!!!', '!!!')).toBe(0);
    expect(similarity('', 'abc')).toBe(0);
    expect(similarityOfSets(new Uint32Array(0), trigramSet('abc'))).toBe(0);
  });
});

describe('trigramSet', () => {
  const ascii = (t: string): number => (t.charCodeAt(0) << 16) | (t.charCodeAt(1) << 8) | t.charCodeAt(2);

  it('pads each word as "  word " and takes every window of three', () => {
    expect(Array.from(trigramSet('a'))).toEqual(['  a', ' a '].map(ascii).sort((x, y) => x - y));
    expect(Array.from(trigramSet('Co.'))).toEqual(['  c', ' co', 'co '].map(ascii).sort((x, y) => x - y));
  });

  it('is sorted and free of duplicates', () => {
    const set = trigramSet('co co co Coca Cola Coca');
    for (let i = 1; i < set.length; i++) expect(set[i]!).toBeGreaterThan(set[i - 1]!);
    expect(Array.from(trigramSet('co co co'))).toEqual(Array.from(trigramSet('co')));
  });

  it('ignores case and everything that is not a letter or digit', () => {
    expect(trigramSet('ACME, Inc.!')).toEqual(trigramSet('acme inc'));
    expect(trigramSet('7-Eleven')).toEqual(trigramSet('7 eleven'));
    expect(trigramSet('')).toEqual(new Uint32Array(0));
    expect(trigramSet('— & / ! 🚀')).toEqual(new Uint32Array(0));
  });

  it('lower-cases one character at a time, as towlower does', () => {
    // No final sigma, and the dotted capital I becomes a plain i.
    expect(trigramSet('ΣΟΦΟΣ')).toEqual(trigramSet('σοφοσ'));
    expect(trigramSet('İstanbul')).toEqual(trigramSet('istanbul'));
  });

  it('gives 24-bit ids', () => {
    for (const id of trigramSet('Société Générale 東京電力 Газпром 3M')) expect(id).toBeLessThan(1 << 24);
  });

  it('treats lone surrogates as separators', () => {
    expect(trigramSet('ab\ud800cd')).toEqual(trigramSet('ab cd'));
  });

  it('as a view, is the same set in one shared buffer, and a set is a copy of its own', () => {
    // Texts short and long (the long ones make the scratch buffer grow), with and without trigrams.
    const texts = [
      '',
      '!?',
      'a',
      'Crown Electronics GmbH & Co. KG',
      '東京電力',
      'x'.repeat(3000),
      'ab cd ab',
    ];
    texts.push(Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '));
    let buffer: ArrayBufferLike | null = null;
    for (const text of texts) {
      const set = trigramSet(text);
      const view = trigramSetView(text);
      expect(Array.from(view)).toEqual(Array.from(set));
      // The view answers from the module's buffer (replaced only when it grows); the set never does.
      expect(view.byteOffset).toBe(0);
      expect(set.buffer).not.toBe(view.buffer);
      if (buffer !== null && text.length < 100) expect(view.buffer).toBe(buffer);
      buffer = view.buffer;
      trigramSetView('zzz qqq');
      // The next call reuses the buffer: a view taken before it no longer holds its set; a set does.
      expect(Array.from(trigramSetView(text))).toEqual(Array.from(set));
    }
  });
});

describe('formatFloat4', () => {
  it('prints every c / u with u <= 64 as PostgreSQL did', () => {
    for (const [c, u, text] of fixture.float4_text) {
      expect([c, u, formatFloat4(float4Ratio(c, u))]).toEqual([c, u, Number(text)]);
    }
  });

  it.each([
    [0.699999988079071, 0.7],
    [67 / 512, 0.13085938],
    [2 / 3, 0.6666667],
    [1.4e-45, 1e-45],
    [3.4028235e38, 3.4028235e38],
    [16777216, 16777216],
    [123456789, 123456790],
    [1.17549435e-38, 1.1754944e-38],
    [0.1, 0.1],
    [-0.7, -0.7],
    [1, 1],
    [0, 0],
  ])('formatFloat4(%p) = %p', (input, printed) => {
    expect(formatFloat4(input)).toBe(printed);
  });

  it('rounds its input to float4 first and round-trips', () => {
    for (const x of [0.3, 1 / 3, Math.PI, 1e-7, 12345.678]) {
      expect(Math.fround(formatFloat4(x))).toBe(Math.fround(x));
    }
  });
});

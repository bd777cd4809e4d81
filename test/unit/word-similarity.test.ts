import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  formatFloat4,
  similarity,
  trigramSequence,
  trigramSet,
  wordSimilarity,
} from '../../src/domain/trigram';

/** test/fixtures/pg-trgm-word-similarity.json, written by the script beside it from a real PostgreSQL. */
interface Fixture {
  server: { version: string; encoding: string; lc_ctype: string };
  pairs: { query: string; text: string; word_similarity: number; similarity: number }[];
}

const fixture = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'pg-trgm-word-similarity.json'), 'utf8'),
) as Fixture;

describe('wordSimilarity matches PostgreSQL pg_trgm word_similarity', () => {
  it('was taken from PostgreSQL 15 with UTF-8 and C.UTF-8', () => {
    expect(fixture.server.version).toMatch(/PostgreSQL 15\./);
    expect(fixture.server.encoding).toBe('UTF8');
    expect(fixture.server.lc_ctype).toBe('C.UTF-8');
    expect(fixture.pairs.length).toBeGreaterThanOrEqual(900);
  });

  it('agrees on every pair of the table', () => {
    const wrong = fixture.pairs
      .map((p) => ({ ...p, here: formatFloat4(wordSimilarity(p.query, p.text)) }))
      .filter((p) => p.here !== p.word_similarity);
    expect(wrong).toEqual([]);
  });

  it('leaves similarity as it was on the same pairs', () => {
    const wrong = fixture.pairs.filter((p) => formatFloat4(similarity(p.query, p.text)) !== p.similarity);
    expect(wrong).toEqual([]);
  });

  it('scores a query found as a word of a long name 1, where similarity is low', () => {
    expect(wordSimilarity('samsung', 'Samsung Electronics Co Ltd')).toBe(1);
    expect(formatFloat4(similarity('samsung', 'Samsung Electronics Co Ltd'))).toBe(0.2962963);
    expect(wordSimilarity('', 'Samsung')).toBe(0);
    expect(wordSimilarity('samsung', '')).toBe(0);
  });
});

describe('wordSimilarity on names longer than its reused buffers', () => {
  // Words sharing no trigram with the query: appended after the match, they leave word_similarity as it
  // was. They are all different, so the name has hundreds of distinct trigrams as well.
  const filler = Array.from({ length: 100 }, (_, k) => ` x${k}y`).join('');
  const long = 'Samsung Electronics' + filler;

  it('finds a query word at the end of a name longer than any before it', () => {
    // The first call in this file to outgrow the shared trigram buffer: word_similarity once read the
    // buffer it had before the text was collected, and lost the end of such a name.
    expect(wordSimilarity('samsung', ' xyloph'.repeat(40) + ' Samsung')).toBe(1);
  });

  it('gives the value of the short name for a name of hundreds of trigrams, before and after', () => {
    expect(new Set(trigramSequence(long)).size).toBeGreaterThan(200);
    const short = wordSimilarity('samsumg', 'Samsung Electronics');
    expect(short).toBeGreaterThan(0);
    expect(short).toBeLessThan(1);
    expect(wordSimilarity('samsumg', long)).toBe(short);
    expect(wordSimilarity('samsumg', 'Samsung Electronics')).toBe(short);
    expect(wordSimilarity('samsung', long)).toBe(1);
  });
});

describe('trigramSequence', () => {
  it('keeps generation order and repeats, and has the trigram set as its distinct values', () => {
    const seq = Array.from(trigramSequence('co co'));
    expect(seq).toHaveLength(6);
    expect(seq.slice(0, 3)).toEqual(seq.slice(3));
    expect(Array.from(new Set(seq)).sort((a, b) => a - b)).toEqual(Array.from(trigramSet('co co')));
  });

  it('keeps every trigram of a text that outgrows its buffer during the call', () => {
    // Longer than any text before it in this file, so the shared buffer grows while this one is read.
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const seq = trigramSequence(words.join(' '));
    expect(seq).toHaveLength(words.reduce((n, w) => n + w.length + 1, 0));
    expect(Array.from(seq)).toEqual(words.flatMap((w) => Array.from(trigramSequence(w))));
  });
});

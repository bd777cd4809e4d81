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

describe('trigramSequence', () => {
  it('keeps generation order and repeats, and has the trigram set as its distinct values', () => {
    const seq = Array.from(trigramSequence('co co'));
    expect(seq).toHaveLength(6);
    expect(seq.slice(0, 3)).toEqual(seq.slice(3));
    expect(Array.from(new Set(seq)).sort((a, b) => a - b)).toEqual(Array.from(trigramSet('co co')));
  });
});

import { RunIds, newRunIdKey } from '../../src/jobs/run-ids';

describe('RunIds', () => {
  const ids = new RunIds('a-key-of-at-least-thirty-two-chars-0123');

  it('gives every stored run its own id within GraphQL Int, and reads it back', () => {
    const seen = new Set<number>();
    for (let stored = 1; stored <= 20_000; stored++) {
      const id = ids.toPublic(stored);
      expect(id >= 1 && id <= 2 ** 30).toBe(true);
      expect(ids.toStored(id)).toBe(stored);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
    const last = 2 ** 30 - 1;
    expect(ids.toStored(ids.toPublic(last))).toBe(last);
  });

  it('keeps neither the order nor the spacing of the stored numbers', () => {
    const run = Array.from({ length: 50 }, (_, i) => ids.toPublic(1000 + i));
    const steps = new Set(run.slice(1).map((id, i) => id - run[i]!));
    expect(steps.size).toBeGreaterThan(45);
    expect(run.slice(1).filter((id, i) => id > run[i]!).length).toBeLessThan(40);
    expect(run.slice(1).filter((id, i) => id > run[i]!).length).toBeGreaterThan(10);
  });

  it('depends on the key: another key numbers the same runs otherwise', () => {
    const other = new RunIds(newRunIdKey());
    const differ = [1, 2, 3, 4, 5, 6, 7, 8].filter((n) => other.toPublic(n) !== ids.toPublic(n));
    expect(differ.length).toBeGreaterThanOrEqual(7);
    // The same key, in another process, agrees.
    expect(new RunIds('a-key-of-at-least-thirty-two-chars-0123').toPublic(42)).toBe(ids.toPublic(42));
  });

  it('reads no stored run from a number outside the ids', () => {
    for (const n of [0, -1, 1.5, 2 ** 30 + 1, Number.MAX_SAFE_INTEGER, Number.NaN]) {
      expect(ids.toStored(n)).toBeNull();
    }
    expect(() => ids.toPublic(0)).toThrow(RangeError);
    expect(() => ids.toPublic(2 ** 30)).toThrow(RangeError);
  });

  it('refuses a short key', () => {
    expect(() => new RunIds('short')).toThrow(/at least 32/);
    expect(newRunIdKey()).toHaveLength(43);
  });
});

import { FixedWindows } from '../../src/http/fixed-windows';

const counter = (windowMs: number) => new FixedWindows(windowMs, (_key, resetAt) => ({ hits: 0, resetAt }));

describe('FixedWindows', () => {
  it('counts per key from the first hit and starts again once the window has ended', () => {
    const w = counter(1000);
    expect(w.empty).toBe(true);
    expect(w.hit('a', 5000)).toEqual({ hits: 1, resetAt: 6000 });
    expect(w.hit('a', 5999)).toEqual({ hits: 2, resetAt: 6000 });
    expect(w.hit('b', 5500)).toEqual({ hits: 1, resetAt: 6500 });
    expect(w.hit('a', 6000)).toEqual({ hits: 1, resetAt: 7000 });
  });

  it('peeks without counting and sees no window once it has ended', () => {
    const w = counter(1000);
    expect(w.peek('a', 0)).toBeUndefined();
    w.hit('a', 100);
    expect(w.peek('a', 1099)).toEqual({ hits: 1, resetAt: 1100 });
    expect(w.peek('a', 1099)?.hits).toBe(1);
    expect(w.peek('a', 1100)).toBeUndefined();
  });

  it('drops ended windows, so a quiet counter is empty again', () => {
    const w = counter(1000);
    w.hit('a', 0);
    w.hit('b', 500);
    expect(w.empty).toBe(false);
    // The sweep at 1200 drops a (ended at 1000) and keeps b (ends at 1500); the next is due at 2200.
    w.peek('c', 1200);
    expect(w.empty).toBe(false);
    w.peek('c', 2199);
    expect(w.empty).toBe(false);
    w.peek('c', 2200);
    expect(w.empty).toBe(true);
  });
});

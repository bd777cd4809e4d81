import { ReadCache } from '../../src/services/read-cache';

describe('ReadCache', () => {
  it('serves a hit without reading again, and forgets everything when the generation moves', async () => {
    let generation = 1;
    let reads = 0;
    const cache = new ReadCache(10, () => generation);
    const load = () => Promise.resolve(++reads);
    expect(await cache.get('a', load)).toBe(1);
    expect(await cache.get('a', load)).toBe(1);
    generation = 2;
    expect(await cache.get('a', load)).toBe(2);
    expect(reads).toBe(2);
  });

  it('shares one read between concurrent misses of a key', async () => {
    let reads = 0;
    const cache = new ReadCache(10, () => 1);
    const load = () => new Promise<number>((resolve) => setTimeout(() => resolve(++reads), 5));
    const values = await Promise.all([cache.get('k', load), cache.get('k', load), cache.get('k', load)]);
    expect(values).toEqual([1, 1, 1]);
    expect(reads).toBe(1);
  });

  it('does not keep failures', async () => {
    const cache = new ReadCache(10, () => 1);
    await expect(cache.get('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await expect(cache.get('x', () => Promise.resolve('up'))).resolves.toBe('up');
  });

  it('evicts the least recently used entry beyond its size', async () => {
    const cache = new ReadCache(2, () => 1);
    await cache.get('a', () => Promise.resolve('a1'));
    await cache.get('b', () => Promise.resolve('b1'));
    await cache.get('a', () => Promise.resolve('a2')); // a is now the most recent
    await cache.get('c', () => Promise.resolve('c1')); // evicts b
    expect(cache.size).toBe(2);
    await expect(cache.get('a', () => Promise.resolve('a3'))).resolves.toBe('a1');
    await expect(cache.get('b', () => Promise.resolve('b2'))).resolves.toBe('b2');
  });

  it('reads through when sized 0', async () => {
    let reads = 0;
    const cache = new ReadCache(0, () => 1);
    await cache.get('a', () => Promise.resolve(++reads));
    await cache.get('a', () => Promise.resolve(++reads));
    expect(reads).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('drops the older half at once when the newer half is full, and never holds more than its size', async () => {
    const cache = new ReadCache(4, () => 1);
    const read = (key: string) => cache.get(key, () => Promise.resolve(key));
    for (const key of ['a', 'b', 'c', 'd']) await read(key);
    expect(cache.size).toBe(4);
    // e starts a new half: a and b go together, where a least-recently-used list would drop only a.
    await read('e');
    expect(cache.size).toBe(3);
    await expect(cache.get('b', () => Promise.resolve('b again'))).resolves.toBe('b again');
    for (const max of [1, 2, 3, 7]) {
      const small = new ReadCache(max, () => 1);
      for (let i = 0; i < 50; i++) {
        await small.get(`k${i}`, () => Promise.resolve(i));
        expect(small.size).toBeLessThanOrEqual(max);
      }
      expect(small.size).toBeGreaterThan(Math.floor(max / 2));
    }
  });
});

import { RETRY_FAILED_MS, oncePerGeneration } from '../../src/store/derived-state';
import type { GenerationRead } from '../../src/store/derived-state';

describe('oncePerGeneration', () => {
  afterEach(() => jest.useRealTimers());

  it('reads a generation once, and again after a failure once RETRY_FAILED_MS has passed', async () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'setImmediate'] });
    const starts: number[] = [];
    const failures: number[] = [];
    let down = true;
    const start = (g: number) => {
      starts.push(g);
      return down ? Promise.reject(new Error('database unreachable')) : Promise.resolve(`data of ${g}`);
    };
    const ask = (running: GenerationRead<string> | null) =>
      oncePerGeneration(
        running,
        7,
        () => 7,
        start,
        (_e, g) => failures.push(g),
      );

    let read = ask(null);
    expect(await read.done).toBeNull();
    expect([read.settled, failures]).toEqual([true, [7]]);
    // Asked again at once: the failure stands, nothing is started.
    expect(ask(read)).toBe(read);
    // The database is back; a while later the next ask reads the generation again.
    down = false;
    jest.setSystemTime(Date.now() + RETRY_FAILED_MS - 1);
    expect(ask(read)).toBe(read);
    jest.setSystemTime(Date.now() + 1);
    read = ask(read);
    expect(await read.done).toBe('data of 7');
    // Read: no more starts for this generation, however long after.
    jest.setSystemTime(Date.now() + 10 * RETRY_FAILED_MS);
    expect(ask(read)).toBe(read);
    expect(starts).toEqual([7, 7]);
  });
});

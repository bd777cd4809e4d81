import { stopWithin } from '../../src/stop-within';
import { recordingLogger } from '../support/server';

describe('stopWithin', () => {
  it('goes on past a step that never ends, saying which, once the bound has passed', async () => {
    const { log, lines } = recordingLogger();
    const begun = Date.now();
    await stopWithin('jobs database connection', () => new Promise<void>(() => undefined), 100, log);
    expect(Date.now() - begun).toBeGreaterThanOrEqual(95);
    expect(Date.now() - begun).toBeLessThan(2_000);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, part: 'jobs database connection', ms: 100 }),
    );
  });

  it('waits for a step that ends in time, and logs a failed one without throwing', async () => {
    const { log, lines } = recordingLogger();
    let closed = false;
    await stopWithin(
      'queue',
      () => new Promise<void>((r) => setTimeout(() => ((closed = true), r()), 30)),
      1_000,
      log,
    );
    expect(closed).toBe(true);
    expect(lines).toEqual([]);
    await stopWithin('queue', () => Promise.reject(new Error('socket gone')), 1_000, log);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, part: 'queue', msg: 'shutdown: a part failed to close' }),
    );
  });
});

import type { Logger } from '../../src/logger';
import { runLoadAlongside } from '../../src/store/load-alongside';

/** The warnings a run logs, by message. */
function logged(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, message: string) => warnings.push(message) } as unknown as Logger;
  return { logger, warnings };
}

const file = () => ({ file: '/d/g-000001.kuzu.x', key: 'g-000001.kuzu#0' });

describe('the work done beside a load', () => {
  it('never fails the load, and says so in plain words when the disk was full', async () => {
    const { logger, warnings } = logged();
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    await expect(
      runLoadAlongside(() => Promise.reject(full), '/s', file, new AbortController().signal, logger),
    ).resolves.toBeUndefined();
    expect(warnings).toEqual([
      'the disk ran out of room for the data derived while loading; servers derive it at their start, which needs that room too: free some',
    ]);
  });

  it('logs any other failure as derived later, and nothing once the load itself failed', async () => {
    const { logger, warnings } = logged();
    const broken = () => Promise.reject(new Error('a bug'));
    await runLoadAlongside(broken, '/s', file, new AbortController().signal, logger);
    expect(warnings).toEqual(['could not prepare derived data while loading; it is derived later']);
    const failed = new AbortController();
    failed.abort();
    await runLoadAlongside(broken, '/s', file, failed.signal, logger);
    expect(warnings).toHaveLength(1);
  });
});

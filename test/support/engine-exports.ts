import { ConnectionPool } from '../../src/store/embedded/connection-pool';

/** Whether a statement run on the embedded engine is one of its exports to a file (`COPY (...) TO`). */
export const isExport = (text: string) => text.startsWith('COPY (');

/**
 * Makes every export the embedded engine is asked for fail with `message` (a full disk, say), as
 * the stores then read by ranges; other statements run. Answers the spy: restore it when done.
 */
export function refuseEngineExports(
  message: string,
): jest.SpyInstance<Promise<unknown>, Parameters<ConnectionPool['run']>> {
  const run = ConnectionPool.prototype.run;
  return jest.spyOn(ConnectionPool.prototype, 'run').mockImplementation(function (
    this: ConnectionPool,
    text,
    options,
  ) {
    return isExport(text) ? Promise.reject(new Error(message)) : run.call(this, text, options);
  });
}

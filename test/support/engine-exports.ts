import path from 'node:path';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import * as stagingFile from '../../src/store/staging-file';

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

/**
 * Reads every file of the embedded engine's exports whose name begins with `prefix` in blocks of
 * `blockBytes` (growing for a longer line) and, at its first block, calls `atFirst` (a store's
 * close, say). Answers how many blocks of such files were read in all, how many after `atFirst`,
 * and the spy: restore it when done.
 */
export function onExportRead(
  prefix: string,
  atFirst: () => void,
  blockBytes = 64,
): { blocks: () => number; after: () => number; spy: jest.SpyInstance } {
  const read = stagingFile.readStagingBlocks;
  let blocks = 0;
  let after = -1;
  const spy = jest
    .spyOn(stagingFile, 'readStagingBlocks')
    .mockImplementation((file, header, block, afterBlock) =>
      path.basename(file).startsWith(prefix)
        ? read(
            file,
            header,
            (bytes, start, end) => {
              blocks++;
              after++;
              if (after === 0) atFirst();
              block(bytes, start, end);
            },
            afterBlock,
            blockBytes,
          )
        : read(file, header, block, afterBlock),
    );
  return { blocks: () => blocks, after: () => Math.max(0, after), spy };
}

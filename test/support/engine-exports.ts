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
 * Runs `read` on `store` (a read that makes the store export a file whose name begins with `prefix`,
 * and reads it) and closes the store at the first block read of that file, the file being read in
 * blocks of `blockBytes` (growing for a longer line). Answers whether the close began, and how many
 * blocks of the file were read after it; the store is closed when this resolves.
 */
export async function closeWhileExportRead(
  store: { close(): Promise<void> },
  prefix: string,
  read: () => Promise<unknown>,
  blockBytes = 64,
): Promise<{ closed: boolean; blocksAfter: number }> {
  const readBlocks = stagingFile.readStagingBlocks;
  let closing = null as Promise<void> | null;
  let blocksAfter = 0;
  const spy = jest
    .spyOn(stagingFile, 'readStagingBlocks')
    .mockImplementation((file, header, block, afterBlock) =>
      path.basename(file).startsWith(prefix)
        ? readBlocks(
            file,
            header,
            (bytes, start, end) => {
              if (closing) blocksAfter++;
              else closing = store.close();
              block(bytes, start, end);
            },
            afterBlock,
            blockBytes,
          )
        : readBlocks(file, header, block, afterBlock),
    );
  try {
    await read().catch(() => null);
    await closing;
  } finally {
    spy.mockRestore();
    if (!closing) await store.close();
  }
  return { closed: closing !== null, blocksAfter };
}

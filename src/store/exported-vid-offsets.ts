/**
 * Reads the file the embedded engine writes from `company/vid-offsets` (every company's internal
 * offset and vid, tab-separated, its first line naming the columns): the map from offsets to vids
 * that relationship lists and the walks' memory need, without handing a million rows over one by one
 * through the engine's row API (about 1 s of this thread at 1M companies; the file about 0.3 s).
 */
import { checkExportedBlock, eachLineOf, fieldBounds, readStagingBlocks } from './staging-file';
import { STAGING_DELIMITER } from './tables';

const DIGIT_0 = 48;
const DIGIT_9 = 57;

/**
 * The vid of every company of `file` by its offset (an offset no line gives is left a hole, as the
 * engine's rows leave it), and '' for a company without one. Reads `blockBytes` at a time (a turn of
 * the event loop each) and calls `afterBlock` after each (it may throw to stop). Throws for a file
 * without the two columns, a line of another number of fields (a value the engine quoted) or an
 * offset that is not a whole number.
 */
export async function exportedVidOffsets(
  file: string,
  afterBlock?: () => void,
  blockBytes?: number,
): Promise<string[]> {
  const byOffset: string[] = [];
  const from = new Int32Array(2);
  const to = new Int32Array(2);
  let columns = 0;
  let offAt = 0;
  await readStagingBlocks(
    file,
    (header) => {
      const names = header.split(STAGING_DELIMITER);
      columns = names.length;
      offAt = names.indexOf('off');
      if (offAt < 0 || !names.includes('vid') || columns !== 2)
        throw new Error(`${file} does not hold the columns off and vid: ${header}`);
    },
    (bytes, start, end) => {
      checkExportedBlock(file, bytes, start, end, columns);
      eachLineOf(bytes, start, end, (a, z) => {
        fieldBounds(bytes, a, z, from, to);
        const offset = offsetOf(file, bytes, from[offAt]!, to[offAt]!);
        byOffset[offset] = bytes.toString('utf8', from[1 - offAt], to[1 - offAt]);
      });
    },
    afterBlock,
    blockBytes,
  );
  return byOffset;
}

/**
 * The whole number `bytes[start, end)` spells in decimal digits; refuses anything else (numberOfBytes
 * reads any staged number, and a sign or a fraction here would index the map wrongly).
 */
function offsetOf(file: string, bytes: Buffer, start: number, end: number): number {
  const refuse = () => {
    throw new Error(`${file}: ${JSON.stringify(bytes.toString('utf8', start, end))} is not an offset`);
  };
  if (start >= end) refuse();
  let n = 0;
  for (let p = start; p < end; p++) {
    const c = bytes[p]!;
    if (c < DIGIT_0 || c > DIGIT_9) refuse();
    n = n * 10 + (c - DIGIT_0);
  }
  if (!Number.isSafeInteger(n)) refuse();
  return n;
}

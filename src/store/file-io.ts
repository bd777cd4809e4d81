import fs from 'node:fs';

/** One read or write moves at most this much: a single one of 2 GiB or more fails. */
export const MAX_IO_BYTES = 1 << 30;

/**
 * Fills `into[0, length)` from `fd` at `position`, in as many reads as it takes; throws, naming
 * `what`, when the file ends first.
 */
export function readExactly(fd: number, into: Buffer, length: number, position: number, what: string): void {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, into, done, Math.min(MAX_IO_BYTES, length - done), position + done);
    if (n === 0) throw new Error(`${what} ends ${length - done} bytes early`);
    done += n;
  }
}

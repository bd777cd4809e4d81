import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

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

/** As readExactly, on Node's thread pool: the calling thread goes on meanwhile. */
export async function readExactlyAsync(
  fd: number,
  into: Uint8Array,
  length: number,
  position: number,
  what: string,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await readAsync(
      fd,
      into,
      done,
      Math.min(MAX_IO_BYTES, length - done),
      position + done,
    );
    if (bytesRead === 0) throw new Error(`${what} ends ${length - done} bytes early`);
    done += bytesRead;
  }
}

const readAsync = promisify(fs.read);

/** Writes `bytes[0, length)` to `fd` at its position, in as many writes as it takes. */
export function writeFully(fd: number, bytes: Buffer, length = bytes.length): void {
  for (let done = 0; done < length;)
    done += fs.writeSync(fd, bytes, done, Math.min(MAX_IO_BYTES, length - done));
}

/**
 * Creates `file` holding `text` in one step, a link to a file written whole beside it, so that no
 * reader ever sees it part-written; false, and nothing changed, when it exists already.
 */
export function createWhole(file: string, text: string): boolean {
  const tmp = temporaryFor(file);
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** A descriptor of `file` opened for reading; null when it cannot be opened (not there, say). */
export function openIfThere(file: string): number | null {
  try {
    return fs.openSync(file, 'r');
  } catch {
    return null;
  }
}

/** Whether a process with this id is running (one we may not signal counts as running). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Temporary names made unique within this process (see temporaryFor). */
let uniqueTemporaries = 0;
/** The unique temporary names this process has handed out (see temporaryFor). */
const uniqueHere = new Set<string>();

/**
 * The temporary name this process writes `file` under before renaming it into place
 * (`<file>.tmp-<pid>`), after removing those that writes cut short by a crash left behind. A temporary
 * file of a process still running is its write under way (two servers on one DATA_DIR) and is kept.
 * `suffix` ends the name (`<file>.tmp-<pid><suffix>`), for a writer that goes by it (the embedded
 * engine exports to a file only under a name that ends in `.csv`). `unique`: a name no other call in
 * this process gets (`<file>.tmp-<pid>-<n><suffix>`), for files of which several may be written at
 * once; this process's own such files are kept, the ones in use among them. Its own are those it
 * handed out, not every one of its pid: a process that has the pid of an ended one (pid 1 in a
 * container, every start) removes what that one left.
 */
export function temporaryFor(file: string, suffix = '', unique = false): string {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.tmp-`;
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    // No directory yet: nothing left behind.
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(suffix)) continue;
    const m = /^(\d+)(-\d+)?$/.exec(name.slice(prefix.length, name.length - suffix.length));
    const pid = Number(m?.[1]);
    if (m && pid === process.pid && m[2] !== undefined && uniqueHere.has(name)) continue;
    if (m && pid > 0 && pid !== process.pid && processAlive(pid)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
  }
  if (!unique) return `${file}.tmp-${process.pid}${suffix}`;
  const name = `${file}.tmp-${process.pid}-${++uniqueTemporaries}${suffix}`;
  uniqueHere.add(path.basename(name));
  return name;
}

/** Makes what was written to `file` durable (fsync), as a write that synced would have. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

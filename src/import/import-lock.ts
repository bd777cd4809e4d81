import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../store/file-io';
import { breakLock, createLock, lockIsStale, readLock, releaseLock } from '../lock-file';

/** The file whose holder is importing into a data directory (under its staging root). */
const LOCK_FILE = 'import.lock';
/** How often a holder shows it is alive (the lock file's modification time). */
const HEARTBEAT_MS = 15_000;
/**
 * A lock not touched for this long is stale whoever wrote it: its process may be on another machine
 * or in another container (where process ids say nothing), or be one whose id was given again.
 */
const SILENT_MS = 120_000;

/** Another import holds the data directory. */
export class ImportBusyError extends Error {}

interface Held {
  pid: number;
  since: number;
  host: string;
}

/** The lock files this process holds (an id recorded here is this process's own, not a reused one). */
const heldHere = new Set<string>();

/**
 * Takes the import lock of the staging root `workDir`: one import at a time replaces a data
 * directory's store. Two at once would each build a next generation from the same `CURRENT`,
 * and one of them, or a mix of one's graph and the other's search index, would be lost while both
 * reported success. A lock is stale, and taken over, when its holder has not touched it for
 * SILENT_MS, or at once when it was written on this machine by a process that no longer runs (an
 * import killed mid-way). Returns the release.
 */
export function takeImportLock(
  workDir: string,
  opts: { isAlive?: (pid: number) => boolean } = {},
): () => void {
  const isAlive = opts.isAlive ?? processAlive;
  const file = path.join(workDir, LOCK_FILE);
  fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
  const mine = `${process.pid} ${Date.now()} ${os.hostname()}\n`;
  for (let round = 0; ; round++) {
    if (createLock(file, mine)) break;
    const seen = readLock(file);
    if (seen === undefined) continue; // gone meanwhile: try again
    const h = holderOf(seen.text);
    const stale = lockIsStale(h, seen.mtimeMs, SILENT_MS, { holdsIt: heldHere.has(file), isAlive });
    if (!stale || round > 5) {
      throw new ImportBusyError(
        `another import into this DATA_DIR is running (${h ? `process ${h.pid} on ${h.host}, since ${new Date(h.since).toISOString()}` : 'its lock is being written'}); ` +
          'wait for it to end, then import again',
      );
    }
    breakLock(file, seen.text);
  }
  heldHere.add(file);
  const beat = setInterval(() => {
    const now = new Date();
    try {
      fs.utimesSync(file, now, now);
    } catch {
      // Removed under it: the release below finds nothing to remove.
    }
  }, HEARTBEAT_MS);
  beat.unref();
  return () => {
    clearInterval(beat);
    heldHere.delete(file);
    releaseLock(file, mine);
  };
}

/** The lock's holder as written, or null when its text is not one (damaged). */
function holderOf(text: string): Held | null {
  const [pid, since, host] = text.trim().split(' ');
  const held = { pid: Number(pid), since: Number(since), host: host ?? '' };
  return Number.isSafeInteger(held.pid) && Number.isFinite(held.since) && held.host !== '' ? held : null;
}

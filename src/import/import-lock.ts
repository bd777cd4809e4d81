import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from '../store/file-io';

/** The file whose holder is importing into a data directory (under its staging root). */
const LOCK_FILE = 'import.lock';
/** A lock older than this is stale even when its process id is in use again (no import runs two days). */
const STALE_AFTER_MS = 48 * 3600_000;

/** Another import holds the data directory. */
export class ImportBusyError extends Error {}

/**
 * Takes the import lock of the staging root `workDir`: one import at a time replaces a data
 * directory's store. Two at once would each build a next generation from the same `CURRENT`,
 * and one of them, or a mix of one's graph and the other's search index, would be lost while both
 * reported success. A lock left by a process that no longer runs is taken over. Returns the release.
 */
export function takeImportLock(
  workDir: string,
  opts: { now?: number; isAlive?: (pid: number) => boolean } = {},
): () => void {
  const isAlive = opts.isAlive ?? processAlive;
  const file = path.join(workDir, LOCK_FILE);
  fs.mkdirSync(workDir, { recursive: true });
  const mine = `${process.pid} ${opts.now ?? Date.now()}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, mine, { flag: 'wx' });
      break;
    } catch (err) {
      // Two imports taking over one stale lock: the one that lost finds the winner's lock next time round.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
    }
    const held = readLock(file);
    if (held && isAlive(held.pid) && (opts.now ?? Date.now()) - held.since < STALE_AFTER_MS) {
      throw new ImportBusyError(
        `another import into this DATA_DIR is running (process ${held.pid}, since ${new Date(held.since).toISOString()}); ` +
          'wait for it to end, then import again',
      );
    }
    // Its process is gone (killed, or crashed before its clean-up): the lock is stale.
    fs.rmSync(file, { force: true });
  }
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8') === mine) fs.rmSync(file, { force: true });
    } catch {
      // Removed already.
    }
  };
}

function readLock(file: string): { pid: number; since: number } | null {
  try {
    const [pid, since] = fs.readFileSync(file, 'utf8').trim().split(' ').map(Number);
    return Number.isSafeInteger(pid) && Number.isFinite(since) ? { pid: pid!, since: since! } : null;
  } catch {
    return null;
  }
}

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive, temporaryFor } from '../store/file-io';

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
    if (create(file, mine)) break;
    const seen = readLock(file);
    if (seen === undefined) continue; // gone meanwhile: try again
    // An unreadable lock (damaged) counts as held until it has been silent as long as any.
    const stale =
      seen.held === null
        ? Date.now() - seen.mtimeMs > SILENT_MS
        : isStale(file, seen.held, seen.mtimeMs, isAlive);
    if (!stale || round > 5) {
      const h = seen.held;
      throw new ImportBusyError(
        `another import into this DATA_DIR is running (${h ? `process ${h.pid} on ${h.host}, since ${new Date(h.since).toISOString()}` : 'its lock is being written'}); ` +
          'wait for it to end, then import again',
      );
    }
    takeAway(file, seen.text);
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
    try {
      if (fs.readFileSync(file, 'utf8') === mine) fs.rmSync(file, { force: true });
    } catch {
      // Removed already.
    }
  };
}

/** Creates the lock with its contents in one step (a link to a file written beside it); false when it exists. */
function create(file: string, text: string): boolean {
  const tmp = temporaryFor(file);
  fs.writeFileSync(tmp, text);
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

function isStale(file: string, held: Held, mtimeMs: number, isAlive: (pid: number) => boolean): boolean {
  if (Date.now() - mtimeMs > SILENT_MS) return true;
  if (held.host !== os.hostname()) return false;
  // This process's own id: stale unless this process holds it (a container's first process, say,
  // restarted after its import was killed, gets the same id again).
  if (held.pid === process.pid) return !heldHere.has(file);
  return !isAlive(held.pid);
}

/**
 * Removes the stale lock `text` read: renamed away first, so that of two imports taking it over at
 * once only one removes it, and a fresh lock written meanwhile by a third is put back, not removed.
 */
function takeAway(file: string, text: string): void {
  const aside = `${file}.stale.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // another import took it away first
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== text) fs.linkSync(aside, file);
  } catch {
    // A lock in place again already: that one stands.
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/** The lock's holder as written (null when unreadable), its text and time; undefined when there is none. */
function readLock(file: string): { held: Held | null; text: string; mtimeMs: number } | undefined {
  let text: string;
  let mtimeMs: number;
  try {
    text = fs.readFileSync(file, 'utf8');
    mtimeMs = fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const [pid, since, host] = text.trim().split(' ');
  const held = {
    pid: Number(pid),
    since: Number(since),
    host: host ?? '',
  };
  const ok = Number.isSafeInteger(held.pid) && Number.isFinite(held.since) && held.host !== '';
  return { held: ok ? held : null, text, mtimeMs };
}

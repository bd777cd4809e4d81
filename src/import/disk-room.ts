/**
 * Room on disk for an embedded import, and what to say when there is not enough: the new graph
 * generation and the files derived from it are built under DATA_DIR beside the one served, with the
 * staging files, so an import that finds too little room fails late, after minutes of work.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDiskFull } from '../disk-full';

/**
 * What an embedded import takes under DATA_DIR at its peak, as a multiple of its input files'
 * size: the new generation with its search index, walks' memory and point-read file, and the
 * staging beside them. Measured at 5.9 (20,000 companies, 41 MB of files) and 5.8 (1M companies,
 * 2.1 GB of files, 12.2 GB at the peak).
 */
export const IMPORT_ROOM_FACTOR = 6;

/**
 * Bytes an unprivileged writer may still write on the file system that holds `dir` (or, where it
 * does not exist yet, its nearest existing parent); null where the system does not say.
 */
export function freeBytes(dir: string): number | null {
  let at = path.resolve(dir);
  for (;;) {
    try {
      const s = fs.statfsSync(at);
      return s.bavail * s.bsize;
    } catch (e) {
      const parent = path.dirname(at);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) return null;
      at = parent;
    }
  }
}

/** Bytes of the CSV files directly in an import directory (links to files followed, as the import follows them). */
export function inputBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.name.endsWith('.csv') || !(entry.isFile() || entry.isSymbolicLink())) continue;
    const st = fs.statSync(path.join(dir, entry.name), { throwIfNoEntry: false });
    if (st?.isFile()) total += st.size;
  }
  return total;
}

/** Bytes in units a reader takes in at a glance: 512 B, 3.4 MB, 12 GB. */
export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let u = 0;
  let v = n;
  const shown = () => (u === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0));
  // Rounded as it is shown: 999.95 MB is 1.0 GB, not 1000 MB.
  while (Number(shown()) >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${shown()} ${units[u]}`;
}

/** What an embedded import of files of `input` bytes needs under DATA_DIR at its peak. */
export function importRoom(input: number): number {
  return Math.ceil(input * IMPORT_ROOM_FACTOR);
}

/**
 * The warning for an import about to start with less room than it needs, or null when there is
 * enough or the room is unknown.
 */
export function roomWarning(dataDir: string, free: number | null, input: number): string | null {
  const needed = importRoom(input);
  if (free === null || free >= needed) return null;
  return (
    `Warning: ${formatBytes(free)} free under DATA_DIR (${dataDir}); an import of ${formatBytes(input)} of files ` +
    `needs about ${formatBytes(needed)} there at its peak (the new graph and its derived files are built beside ` +
    `the one served). It may fail for want of room; free some, or set DATA_DIR to a larger disk.\n`
  );
}

/** Where the store stands after an import failed: what the user is told of it. */
export type FailedImportState =
  /** The failure came before the load: nothing was written to the store. */
  | 'untouched'
  /** The new graph was being built beside the one served, which is still the one served. */
  | 'unchanged'
  /** The new graph is in place; what failed came after. */
  | 'replaced'
  /** The store is changed in place (Neo4j): it may hold part of the files. */
  | 'partial'
  /** Nothing is known of it (files for another store's importer). */
  | 'unknown';

const STATE_TEXT: Record<FailedImportState, string> = {
  untouched: 'Nothing was changed: the store was not touched.',
  unchanged: 'Nothing was changed: the graph served is the one before this import.',
  replaced: 'The new graph is in place; what failed came after.',
  partial:
    'The store may hold part of these files now: importing them again completes the import ' +
    '(what is already in is left as it is).',
  unknown: '',
};

/**
 * What the command prints when an import fails other than by its rejected rows or its lock. `where`:
 * the directories it writes in, as the user named them; `input`: the bytes of its files where the
 * room it needs is known (an embedded import), else null.
 */
export function importFailureText(
  e: unknown,
  ctx: { where: string; state: FailedImportState; input: number | null },
): string {
  const lines = [`Import failed: ${e instanceof Error ? e.message.trim() : String(e)}`];
  if (isDiskFull(e)) {
    // The room free now says little: what the import had written is removed by the time this prints.
    const room =
      ctx.input === null
        ? ''
        : ` An import of these files needs about ${formatBytes(importRoom(ctx.input))} there at its peak.`;
    lines.push(
      `The disk ran out of room under ${ctx.where}.${room} ` +
        'Free some, or set DATA_DIR to a larger disk, and import again.',
    );
  }
  if (STATE_TEXT[ctx.state]) lines.push(STATE_TEXT[ctx.state]);
  return `${lines.join('\n')}\n`;
}

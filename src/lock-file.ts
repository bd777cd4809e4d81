import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { createWhole, processAlive } from './store/file-io';

/**
 * A lock across processes as a file beside what it guards, holding its holder's text (each lock
 * writes and parses its own). Used by the import lock (`import/import-lock.ts`) and the API key
 * file (`http/api-keys.ts`).
 */

/** Who wrote a lock, as its text names it. */
export interface LockHolder {
  pid: number;
  host: string;
}

/** Creates the lock with its text in one step (a link to a file written beside it); false when it exists. */
export function createLock(file: string, text: string): boolean {
  return createWhole(file, text);
}

/** The lock's text and when it was last touched; undefined when there is none. */
export function readLock(file: string): { text: string; mtimeMs: number } | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return { text, mtimeMs: fs.statSync(file).mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Whether a lock is left over: not touched for `silentMs` (its holder may be on another machine or
 * in another container, where process ids say nothing), or written on this machine by a process that
 * no longer runs. This process's own id counts as gone unless it holds the lock (`holdsIt`): a
 * container's first process gets the same id again after a restart. A lock naming no holder
 * (damaged) counts as held until it has been silent as long as any.
 */
export function lockIsStale(
  holder: LockHolder | null,
  mtimeMs: number,
  silentMs: number,
  { holdsIt = false, isAlive = processAlive }: { holdsIt?: boolean; isAlive?: (pid: number) => boolean } = {},
): boolean {
  if (Date.now() - mtimeMs > silentMs) return true;
  if (holder === null || holder.host !== os.hostname()) return false;
  if (holder.pid === process.pid) return !holdsIt;
  return !isAlive(holder.pid);
}

/**
 * Removes the stale lock whose text was `text`: renamed aside first, so that of two processes
 * breaking it at once only one removes it, and a fresh lock written meanwhile by a third is put
 * back, not removed.
 */
export function breakLock(file: string, text: string): void {
  const aside = `${file}.stale.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // broken by another process first
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== text) fs.linkSync(aside, file);
  } catch {
    // A lock in place again already: that one stands.
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/** Removes the lock if it still holds `text` (this holder's). */
export function releaseLock(file: string, text: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === text) fs.rmSync(file, { force: true });
  } catch {
    // Removed already.
  }
}

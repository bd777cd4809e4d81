import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { feedSearchIndex } from '../search/build-thread';
import { searchIndexAlongside } from '../search/staged-index';
import type { TableName } from '../store/tables';
import { processAlive } from '../store/file-io';
import { stageOnThread } from './stage-thread';
import type { ImportProgress, RejectedRow, StageResult } from './stage-result';
import { turnPretenuringOff } from '../heap-settings';
import { takeImportLock } from './import-lock';

export interface ImportOutcome {
  counts: Record<TableName, number>;
  items: StageResult['items'];
  rejected: RejectedRow[];
  warnings: StageResult['warnings'];
  warningCount: number;
  /** Data rows read per input file (header excluded), by file name, rejected rows included. */
  inputRows: Record<string, number>;
  stageMs: number;
  loadMs: number;
  /** False for a dry run: the files were validated and staged, the store left alone. */
  applied: boolean;
}

/** Where imports stage their files under a data directory. */
export function stagingRoot(dataDir: string): string {
  return path.join(dataDir, 'staging');
}

const STAGING_DIR = /^staging-(\d+)-(\d+)$/;
/**
 * A staging directory older than this is stale even when its process id is in
 * use: ids are reused (a restarted container starts from the same few), and no
 * import stages for two days.
 */
const STALE_AFTER_MS = 48 * 3600_000;

/**
 * Removes the staging directories of imports that no longer run (killed, or
 * crashed before their own clean-up), which would otherwise hold hundreds of
 * megabytes forever. A directory whose process still runs is left alone, unless
 * it is older than any import takes. Returns the directories removed.
 */
export function removeStaleStaging(
  workDir: string,
  opts: { now?: number; isAlive?: (pid: number) => boolean } = {},
): string[] {
  const now = opts.now ?? Date.now();
  const isAlive = opts.isAlive ?? processAlive;
  let names: string[];
  try {
    names = fs.readdirSync(workDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = STAGING_DIR.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    const started = Number(m[2]);
    if (isAlive(pid) && now - started < STALE_AFTER_MS) continue;
    const dir = path.join(workDir, name);
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/**
 * Validates and stages an import directory, then replaces the store's graph
 * with it (not with `dryRun`, which needs no store). The live graph is untouched until the new one is
 * complete. Staging directories that earlier, killed imports left in `workDir`
 * are removed first. One import at a time replaces the store of a `workDir`'s data
 * directory: another one running refuses this one (ImportBusyError) before it reads a row.
 */
export async function importDirectory(
  store: Pick<GraphStore, 'replaceAll'> | null,
  inputDir: string,
  opts: {
    workDir: string;
    maxRejected?: number;
    dryRun?: boolean;
    onProgress?: (p: ImportProgress) => void;
    onLoad?: (table: string, done: number, total: number) => void;
    /**
     * Build the search index from the staging files while the store loads them, for a store that
     * keeps it beside the data (default true): the first start after the import then loads it.
     */
    searchIndex?: boolean;
    log?: Logger;
  },
): Promise<ImportOutcome> {
  if (!store && !opts.dryRun) throw new Error('an import that is not a dry run needs a store');
  const release = opts.dryRun ? () => undefined : takeImportLock(opts.workDir);
  try {
    return await stageAndLoad(store, inputDir, opts);
  } finally {
    release();
  }
}

async function stageAndLoad(
  store: Pick<GraphStore, 'replaceAll'> | null,
  inputDir: string,
  opts: Parameters<typeof importDirectory>[2],
): Promise<ImportOutcome> {
  turnPretenuringOff();
  removeStaleStaging(opts.workDir);
  const stagingDir = path.join(opts.workDir, `staging-${process.pid}-${Date.now()}`);
  fs.mkdirSync(stagingDir, { recursive: true, mode: 0o700 });
  const searchIndex = store !== null && !opts.dryRun && (opts.searchIndex ?? true);
  // The search index is built from the Company rows as the staging hands them over, long before
  // the load, where it can be (see feedSearchIndex): most of its work then runs beside the
  // staging's reads rather than the engine's load. Otherwise it is built from the staging files
  // during the load.
  const fed = searchIndex ? ((await feedSearchIndex(opts.log)) ?? undefined) : undefined;
  try {
    const t0 = Date.now();
    const staged = await stageOnThread(inputDir, stagingDir, {
      maxRejected: opts.maxRejected,
      onProgress: opts.onProgress,
      companies: fed,
    });
    const t1 = Date.now();
    if (store && !opts.dryRun) {
      const alongside = searchIndex ? searchIndexAlongside(opts.log, fed) : undefined;
      await store.replaceAll(stagingDir, opts.onLoad, alongside);
    }
    return {
      counts: staged.counts,
      items: staged.items,
      rejected: staged.rejected,
      warnings: staged.warnings,
      warningCount: staged.warningCount,
      inputRows: staged.inputRows,
      stageMs: t1 - t0,
      loadMs: Date.now() - t1,
      applied: !opts.dryRun,
    };
  } finally {
    fed?.stop();
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

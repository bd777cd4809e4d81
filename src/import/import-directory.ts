import fs from 'node:fs';
import path from 'node:path';
import type { GraphStore } from '../store/graph-store';
import type { TableName } from '../store/tables';
import { stageImport } from './stage';
import type { ImportProgress, RejectedRow, StageResult } from './stage-result';

export interface ImportOutcome {
  counts: Record<TableName, number>;
  items: StageResult['items'];
  rejected: RejectedRow[];
  stageMs: number;
  loadMs: number;
}

/**
 * Validates and stages an import directory, then replaces the store's graph
 * with it. The live graph is untouched until the new one is complete.
 */
export async function importDirectory(
  store: GraphStore,
  inputDir: string,
  opts: {
    workDir: string;
    maxRejected?: number;
    onProgress?: (p: ImportProgress) => void;
    onLoad?: (table: string, done: number, total: number) => void;
  },
): Promise<ImportOutcome> {
  const stagingDir = path.join(opts.workDir, `staging-${process.pid}-${Date.now()}`);
  fs.mkdirSync(stagingDir, { recursive: true });
  try {
    const t0 = Date.now();
    const staged = await stageImport(inputDir, stagingDir, {
      maxRejected: opts.maxRejected,
      onProgress: opts.onProgress,
    });
    const t1 = Date.now();
    await store.replaceAll(stagingDir, opts.onLoad);
    return {
      counts: staged.counts,
      items: staged.items,
      rejected: staged.rejected,
      stageMs: t1 - t0,
      loadMs: Date.now() - t1,
    };
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

/**
 * The point-read file (point-file.ts) of a staged import, written while the store loads its staging
 * files: the Company and Edge staging files themselves are kept as the file's rows (each under a
 * name of its own beside it, a second link to the staging file), found by the keys of their lines.
 * A read decodes its one row as the embedded engine gives it back once loaded (stagedRowDecoder)
 * and maps it with the mappers a store writes its own file with (toProfile, toEdge), so the file
 * answers as one written from the loaded graph does. Mapping every edge with its evidence took
 * about 70 s of CPU at 1M companies, and every profile 16 s, which on two cores lengthened the load
 * by half as much; a read maps its one row in a few microseconds more. The Edge lines' keys are
 * noted by the import as it writes them (staged-keys.ts); the Company lines', found by reading the
 * lines (about a second at 1M). A server opens the file at its first read of the new data instead
 * of reading every profile and edge back from the engine, which at 1M companies took four to six
 * minutes of a first start, beside the requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import type { LoadAlongside } from './graph-store';
import { fillPointFile } from './point-file';
import { LineEntries, keysFileOf, readStagedKeys } from './staged-keys';
import type { StagedKeys } from './staged-keys';
import {
  checkStagedHeader,
  readStagingBlocks,
  stagedColumns,
  stagedHeader,
  stagedCounts,
} from './staging-file';
import { STAGING_DELIMITER, stagingFile } from './tables';
import type { TableName } from './tables';

/**
 * Writes the point-read file `file` under `key` from the staging directory: every company, and
 * with `edges` every edge with its evidence. Throws when the staging holds other counts than its
 * marker states, or `signal` aborts (nothing is left behind then).
 */
export async function writeStagedPointFile(
  stagingDir: string,
  file: string,
  key: string,
  edges: boolean,
  signal: AbortSignal,
): Promise<{ companies: number; edges: number }> {
  const counts = stagedCounts(stagingDir);
  const expected = { companies: counts.Company ?? 0, edges: edges ? (counts.Edge ?? 0) : 0 };
  await fillPointFile(file, key, expected, async (writer) => {
    for (const [kind, table] of KEPT) {
      if (kind === 'edges' && !edges) continue;
      const staged = path.join(stagingDir, stagingFile(table));
      const keys = await stagedKeysOf(staged, table, signal);
      signal.throwIfAborted();
      writer.addStagingFile(kind, stagedColumns(table), staged, keys);
    }
    return true;
  });
  return expected;
}

/** The kinds of the point-read file and the staging files kept as their rows. */
const KEPT = [
  ['companies', 'Company'],
  ['edges', 'Edge'],
] as const;

/**
 * The keys of the lines of `file`, a staging file of `table`, its header checked: those the import
 * saved beside it (the Edge lines'), or else found by reading its lines (the Company lines', about
 * a second at 1M companies, where writing each profile as JSON took 16 s).
 */
async function stagedKeysOf(file: string, table: TableName, signal: AbortSignal): Promise<StagedKeys> {
  const bytes = fs.statSync(file).size;
  const saved = readStagedKeys(keysFileOf(file), bytes);
  if (saved) {
    checkStagedHeader(table, stagedHeader(file));
    return saved;
  }
  const entries = new LineEntries();
  let at = 0;
  await readStagingBlocks(
    file,
    (text) => {
      checkStagedHeader(table, text.split(STAGING_DELIMITER));
      at = Buffer.byteLength(text) + 1;
    },
    (block, start, end) => {
      at = entries.addLines(block, start, end, at);
    },
    () => signal.throwIfAborted(),
  );
  if (at !== bytes) throw new Error(`staging file ${file} changed while its lines were read`);
  const { count, hashes, offsets, lengths } = entries;
  return { count, hashes, offsets, lengths, bytes };
}

/**
 * The point-read file written while the store loads an import (see writeStagedPointFile), as the
 * store names it (`name`) and keys it (`keyOf` the data's key).
 */
export function pointFileAlongside(
  name: string,
  keyOf: (dataKey: string) => string,
  edges: boolean,
  log?: Logger,
): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const started = Date.now();
    const { file, key } = derivedFile(name);
    const counts = await writeStagedPointFile(stagingDir, file, keyOf(key), edges, signal);
    log?.info({ ...counts, ms: Date.now() - started, file }, 'point-read file of the import written');
  };
}

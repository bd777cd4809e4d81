/**
 * The tier walks' memory (walk-memory.ts) of a staged import, built from its Company and SUPPLIES
 * staging files while the store loads the relationships, and saved where a server looks for it.
 * Without it, a server reads every relationship back through the engine after each import (about
 * 70 s at 1M companies on 2 vCPUs), and list pages, exports and the engine's other reads wait or
 * slow down meanwhile; with it, the server loads the file in a second or two.
 *
 * The memory is indexed by the engine's internal offsets, which only the loaded graph knows: the
 * store reads them once the Company table is loaded and hands them over (`vids`). Each staged line
 * is decoded into the values the engine gives back for it, so that the builder sees what the
 * server's own read would show it (tests hold the two memories to the same answers).
 */
import path from 'node:path';
import type { Logger } from '../logger';
import type { LoadAlongside } from './graph-store';
import { str } from './mappers';
import type { Props } from './mappers';
import {
  checkStagedHeader,
  readStagingFile,
  stagedColumns,
  stagedCounts,
  stagedRowDecoder,
} from './staging-file';
import { TABLES, stagingFile } from './tables';
import type { TableName } from './tables';
import { WalkMemoryBuilder } from './walk-memory';
import type { WalkMemory } from './walk-memory';

/** Rows handed to the builder at a time. */
const BATCH = 10_000;

/**
 * The memory of the staged data, for the companies `vids` by internal offset. Throws when the
 * staging holds other counts than its marker states, a relationship's end is not among `vids`, or
 * `signal` aborts.
 */
export async function stagedWalkMemory(
  stagingDir: string,
  vids: readonly string[],
  signal: AbortSignal,
): Promise<WalkMemory> {
  const counts = stagedCounts(stagingDir);
  const builder = new WalkMemoryBuilder(vids, counts.SUPPLIES ?? 0);
  await eachStagedBatch(stagingDir, 'Company', signal, (rows) => {
    for (const r of rows) r.off = builder.offsetOf(str(r.vid) ?? '');
    builder.addCompanies(rows);
  });
  await eachStagedBatch(stagingDir, 'SUPPLIES', signal, (rows) => {
    for (const r of rows) {
      r.s = builder.offsetOf(str(r.from) ?? '');
      r.c = builder.offsetOf(str(r.to) ?? '');
      // A timestamp comes back as a date; the staging holds ISO 8601 UTC text.
      const latest = str(r.latest_edge_date);
      r.latest = latest === null ? null : Date.parse(latest);
    }
    builder.addRelationships(rows);
  });
  const walks = builder.finish();
  if (walks.relationships !== (counts.SUPPLIES ?? 0))
    throw new Error('the staged relationships are not those its marker counts');
  walks.keepClustersIf(counts.CLUSTER_SUPPLIES ?? 0, undefined);
  return walks;
}

/**
 * Every data line of `table`'s staging file, decoded as the engine gives it back (a relationship's
 * ends as `from` and `to`, the vids they hold), `BATCH` at a time.
 */
async function eachStagedBatch(
  stagingDir: string,
  table: TableName,
  signal: AbortSignal,
  add: (rows: Props[]) => void,
): Promise<void> {
  const ends = TABLES[table].kind === 'rel' ? 2 : 0;
  const decode = stagedRowDecoder(table, stagedColumns(table));
  let rows: Props[] = [];
  await readStagingFile(
    path.join(stagingDir, stagingFile(table)),
    (fields, line) => {
      if (line === 1) {
        if (ends > 0 && (fields[0] !== 'from' || fields[1] !== 'to'))
          throw new Error(`staged ${table} header does not begin with from, to`);
        checkStagedHeader(table, fields.slice(ends));
        return;
      }
      const row = decode(ends > 0 ? fields.slice(ends) : fields);
      if (ends > 0) {
        row.from = fields[0];
        row.to = fields[1];
      }
      rows.push(row);
      if (rows.length >= BATCH) {
        add(rows);
        rows = [];
      }
    },
    () => signal.throwIfAborted(),
  );
  if (rows.length > 0) add(rows);
}

/**
 * The work alongside a load that saves the memory as `name` among the data's derived files, once
 * `vids` (the loaded companies by internal offset) resolves; a rejection of `vids` (the load
 * failed first) ends it.
 */
export function walkMemoryAlongside(
  name: string,
  vids: Promise<readonly string[]>,
  log?: Logger,
): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const byOffset = await vids;
    const started = Date.now();
    const { file, key } = derivedFile(name);
    const walks = await stagedWalkMemory(stagingDir, byOffset, signal);
    await walks.save(file, key);
    log?.info(
      { relationships: walks.relationships, ms: Date.now() - started, file },
      'walk memory of the import written',
    );
  };
}

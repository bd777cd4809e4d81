/**
 * Validate, derive, stage: reads an import directory (docs/import-format.md),
 * rejects bad rows with their physical line numbers, computes the derived
 * fields (cluster membership, counts, per-edge evidence summaries, cluster
 * edges) and writes one staging file per table of the staging contract
 * (src/store/tables.ts). A `_SUCCESS` marker is written last; a directory
 * without it is incomplete. Evidence reaches its Edge row through temporary
 * bucket files (evidence-buckets.ts).
 *
 * The files are read in the order their references need: each file's module
 * under stage/ fills its part of one StageState, which the derive step and the
 * table writers then read.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stagedKeysFile } from '../store/staged-keys';
import { SUCCESS_MARKER, TABLES, stagingFile } from '../store/tables';
import type { TableName } from '../store/tables';
import { ChunkWriter, CsvFatalError } from './csv';
import { bucketFile } from './evidence-buckets';
import { DEFAULT_MAX_REJECTED } from './stage-result';
import type { StageOptions, StageResult } from './stage-result';
import { stageAddresses } from './stage/addresses';
import { stageClusters } from './stage/clusters';
import { stageCompanies } from './stage/companies';
import { derive } from './stage/derive';
import { stageEvidence } from './stage/evidence';
import { stageIdentifiers } from './stage/identifiers';
import { stageRelationships } from './stage/relationships';
import { StageState } from './stage/state';
import { CompanyFeed, checkWrittenColumns, header, writeTables } from './stage/write-tables';

/**
 * Validates the import files in inputDir and writes the staging files of every
 * table into stagingDir, then the `_SUCCESS` marker. Bad rows are rejected and
 * reported, their dependants with them; the import stops with an
 * ImportAbortedError when more than `maxRejected` rows are rejected or when a
 * required file or column is missing, and then leaves no staging files behind.
 */
export async function stageImport(
  inputDir: string,
  stagingDir: string,
  opts: StageOptions = {},
): Promise<StageResult> {
  const state = new StageState(
    inputDir,
    stagingDir,
    opts.maxRejected ?? DEFAULT_MAX_REJECTED,
    opts.onProgress,
  );
  checkWrittenColumns();
  let feed: CompanyFeed | undefined;
  await mkdir(stagingDir, { recursive: true });
  await rm(join(stagingDir, SUCCESS_MARKER), { force: true });
  try {
    for (const t of Object.keys(TABLES) as TableName[]) {
      const w = await ChunkWriter.create(join(stagingDir, stagingFile(t)));
      state.writers.set(t, w);
      w.write(header(t));
    }
    await stageCompanies(state, opts.companies);
    await stageClusters(state);
    await stageIdentifiers(state);
    await stageAddresses(state);
    // Handed over while the relationships and evidence are read (see CompanyFeed).
    feed = opts.companies && new CompanyFeed(state, opts.companies);
    await stageRelationships(state);
    await stageEvidence(state, opts.evidenceWorker, opts.evidenceSplit);
    if (feed) {
      feed.hurry();
      await feed.done;
    }
    const derived = await derive(state);
    opts.companies?.counts({
      suppliers: derived.countSup,
      customers: derived.countCus,
      supplierEvidence: derived.evSup,
      customerEvidence: derived.evCus,
    });
    await writeTables(state, derived);
    for (const w of state.writers.values()) await w.close();
  } catch (e) {
    feed?.stop();
    await state.evidence?.abort().catch(() => undefined);
    for (const w of state.writers.values()) await w.abandon().catch(() => undefined);
    await Promise.all(
      (Object.keys(TABLES) as TableName[]).flatMap((t) => [
        rm(join(stagingDir, stagingFile(t)), { force: true }),
        rm(stagedKeysFile(stagingDir, t), { force: true }),
      ]),
    );
    await removeBuckets(state);
    if (e instanceof CsvFatalError) throw state.aborted(e.message);
    throw e;
  }
  await removeBuckets(state);
  const result: StageResult = {
    counts: state.counts,
    items: state.items,
    rejected: state.sortedRejected(),
    warnings: state.warnings,
    warningCount: state.warningCount,
    inputRows: state.inputRows,
  };
  await writeFile(
    join(stagingDir, SUCCESS_MARKER),
    `${JSON.stringify({ counts: result.counts, items: result.items, inputRows: result.inputRows, rejected: result.rejected.length })}\n`,
  );
  return result;
}

async function removeBuckets(state: StageState): Promise<void> {
  const all: Promise<void>[] = [];
  for (let b = 0; b < state.nBuckets; b++)
    all.push(rm(join(state.stagingDir, bucketFile(b)), { force: true }));
  await Promise.all(all);
}

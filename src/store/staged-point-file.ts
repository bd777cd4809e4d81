/**
 * The point-read file (point-file.ts) of a staged import, written from its Company and Edge
 * staging files while the store loads them. Each staged row is decoded as the embedded engine
 * gives it back once loaded (stagedRowDecoder) and mapped by the mappers a store writes its own
 * file with (toProfile, toEdge), so the file answers as one written from the loaded graph does:
 * the profiles as they are written, the edges when they are read. Mapping every edge with its
 * evidence took about 70 s of CPU at 1M companies, which on two cores lengthened the load by as
 * much; an edge read maps its one row in about 11 microseconds more. The Edge staging file itself is
 * kept as the file's edges, found by the keys the import noted as it wrote it (staged-keys.ts). A
 * server opens the file at its first read of the new data instead of reading every profile and edge
 * back from the engine, which at 1M companies took four to six minutes of a first start, beside the
 * requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import type { LoadAlongside } from './graph-store';
import type { CompanyProfile } from '../domain/model';
import { toProfile } from './mappers';
import { fillPointFile } from './point-file';
import { readStagedKeys, stagedKeysFile } from './staged-keys';
import {
  checkStagedHeader,
  readStagingBlocks,
  readStagingLines,
  stagedColumns,
  stagedHeader,
  stagedCounts,
  stagedRowDecoder,
} from './staging-file';
import { STAGING_DELIMITER, stagingFile } from './tables';

/**
 * Profiles mapped and written at a time: few, so that a batch's objects die young (see
 * DERIVE_BATCH in embedded/embedded.store.ts).
 */
const BATCH_ROWS = 200;

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
    const decode = stagedRowDecoder('Company', stagedColumns('Company'));
    let profiles: CompanyProfile[] = [];
    await readCompanyLines(stagingDir, signal, (text) => {
      profiles.push(toProfile(decode(text.split(STAGING_DELIMITER))));
      if (profiles.length < BATCH_ROWS) return;
      writer.addCompanies(profiles);
      profiles = [];
    });
    writer.addCompanies(profiles);
    if (edges) {
      const columns = stagedColumns('Edge');
      const file = path.join(stagingDir, stagingFile('Edge'));
      const keys = readStagedKeys(stagedKeysFile(stagingDir, 'Edge'), fs.statSync(file).size);
      if (keys) {
        signal.throwIfAborted();
        checkStagedHeader('Edge', stagedHeader(file));
        writer.addStagingFile('edges', columns, file, keys);
      } else {
        // A staging without the keys of its lines (or with keys of another file): read them here.
        await readStagingBlocks(
          file,
          (text) => checkStagedHeader('Edge', text.split(STAGING_DELIMITER)),
          (bytes, start, end) => writer.addStagedBytes('edges', columns, bytes, start, end),
          () => signal.throwIfAborted(),
        );
      }
    }
    return true;
  });
  return expected;
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

/**
 * Hands `take` every Company staging line but the header, which is checked (the Edge lines are
 * taken as bytes: readStagingBlocks).
 */
async function readCompanyLines(
  stagingDir: string,
  signal: AbortSignal,
  take: (text: string) => void,
): Promise<void> {
  await readStagingLines(
    path.join(stagingDir, stagingFile('Company')),
    (text, line) => {
      if (line === 1) checkStagedHeader('Company', text.split(STAGING_DELIMITER));
      else take(text);
    },
    () => signal.throwIfAborted(),
  );
}

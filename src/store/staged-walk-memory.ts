/**
 * The tier walks' memory (walk-memory.ts) of a staged import, built from its Company and SUPPLIES
 * staging files while the store loads the relationships, and saved where a server looks for it.
 * Without it, a server reads every relationship back through the engine after each import (about
 * 70 s at 1M companies on 2 vCPUs by ranges, 27-32 s since the engine writes them to a file in one
 * scan), and list pages, exports and the engine's other reads wait or slow down meanwhile; with it,
 * the server loads the file in a second or two.
 *
 * The memory is indexed by the engine's internal offsets, which only the loaded graph knows: the
 * store reads them once the Company table is loaded and hands them over (`vids`). Each staged line
 * is decoded into the values the engine gives back for it, so that the builder sees what the
 * server's own read would show it (tests hold the two memories to the same answers).
 */
import path from 'node:path';
import type { Logger } from '../logger';
import type { LoadAlongside } from './graph-store';
import type { Props } from './mappers';
import {
  checkExportedBlock,
  checkStagedHeader,
  eachLineOf,
  exactNumberOfBytes,
  fieldBounds,
  numberOfBytes,
  readStagingBlocks,
  stagedColumns,
  stagedCounts,
  stagedRowDecoder,
} from './staging-file';
import { STAGING_DELIMITER, TABLES, stagingFile } from './tables';
import type { TableName } from './tables';
import { WalkMemoryBuilder } from './walk-memory';
import type { WalkMemory } from './walk-memory';

/** Company rows handed to the builder at a time. */
const BATCH = 10_000;

/** The Company columns the memory holds (see tierview/memory-companies). */
const COMPANY_COLUMNS = [
  'vid',
  'name',
  'company_legal_name',
  'cid_id',
  'domiciled_country',
  'websites',
  'is_public',
  'industry',
  'industry_code_system',
  'industry_code',
  'count_suppliers',
  'count_customers',
  'cluster_parent_vid',
  'is_cluster_parent',
] as const;

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
  const decode = stagedRowDecoder('Company', COMPANY_COLUMNS);
  const fields = new Array<string>(COMPANY_COLUMNS.length);
  let rows: Props[] = [];
  // The engine gives the companies offsets in the order of their lines: the next one is guessed.
  let company = -1;
  await eachStagedLine(stagingDir, 'Company', COMPANY_COLUMNS, signal, (bytes, at) => {
    // Each field a string of its own: one cut from a block's text would keep the block alive.
    for (let i = 0; i < fields.length; i++) fields[i] = bytes.toString('utf8', at[i], at[i + fields.length]);
    const row = decode(fields);
    row.off = company = builder.offsetOfBytes(bytes, at[0]!, at[fields.length]!, company + 1);
    rows.push(row);
    if (rows.length === BATCH) {
      builder.addCompanies(rows);
      rows = [];
    }
  });
  builder.addCompanies(rows);
  const times = new StagedTimes();
  const n = RELATIONSHIP_COLUMNS.length;
  // Every value is read from the line's bytes: a string made for each would cost more than the rest.
  // Lines come grouped by supplier, and most repeat the lists of the line before: each is guessed.
  let supplier = -1;
  let hs = -1;
  let types = -1;
  await eachStagedLine(stagingDir, 'SUPPLIES', RELATIONSHIP_COLUMNS, signal, (bytes, at) => {
    supplier = builder.offsetOfBytes(bytes, at[0]!, at[n]!, supplier);
    hs = builder.listIdOfBytes(bytes, at[7]!, at[7 + n]!, hs);
    types = builder.listIdOfBytes(bytes, at[6]!, at[6 + n]!, types);
    builder.addRelationship(
      supplier,
      builder.offsetOfBytes(bytes, at[1]!, at[1 + n]!),
      times.at(bytes, at[4]!, at[4 + n]!),
      numberOfBytes(bytes, at[3]!, at[3 + n]!),
      numberOfBytes(bytes, at[5]!, at[5 + n]!),
      hs,
      types,
      bytes.subarray(at[2], at[2 + n]),
    );
  });
  const walks = builder.finish();
  if (walks.relationships !== (counts.SUPPLIES ?? 0))
    throw new Error('the staged relationships are not those its marker counts');
  walks.keepClustersIf(counts.CLUSTER_SUPPLIES ?? 0, undefined);
  return walks;
}

/** The SUPPLIES columns the memory holds, in the order stagedWalkMemory reads them. */
const RELATIONSHIP_COLUMNS = [
  'from',
  'to',
  'edge_id',
  'confidence_score',
  'latest_edge_date',
  'status_code',
  'evidence_types',
  'hs_codes',
] as const;

/** The columns of tierview/export-memory-relationships, in its order: the ends by internal offset. */
const EXPORTED_RELATIONSHIP_COLUMNS = [
  's',
  'c',
  'edge_id',
  'confidence_score',
  'status_code',
  'hs_codes',
  'evidence_types',
  'latest',
] as const;

/**
 * Adds to `builder` every relationship of `file`, a file the embedded engine wrote of them
 * (tierview/export-memory-relationships): the ends by internal offset, the values in the staging's
 * text but for the confidence, exact as `<m>p<s>` (exactNumberOfBytes). Each value is read from the
 * line's bytes, as stagedWalkMemory reads the staged lines. Refuses a file in which the engine
 * quoted a value (one holding a tab or a line break, which throughExport looks for first), or a line
 * without the header's fields. `afterBlock` runs after each block of lines (it may throw to stop).
 */
export async function addExportedRelationships(
  builder: WalkMemoryBuilder,
  file: string,
  afterBlock?: () => void,
): Promise<void> {
  const n = EXPORTED_RELATIONSHIP_COLUMNS.length;
  const from = new Int32Array(n);
  const to = new Int32Array(n);
  const times = new StagedTimes();
  // Most lines repeat the lists of the line before: each is guessed.
  let hs = -1;
  let types = -1;
  await readStagingBlocks(
    file,
    (header) => {
      if (header !== EXPORTED_RELATIONSHIP_COLUMNS.join(STAGING_DELIMITER))
        throw new Error(
          `${file} begins with ${header}, not the columns of tierview/export-memory-relationships`,
        );
    },
    (bytes, start, end) => {
      checkExportedBlock(file, bytes, start, end, n);
      eachLineOf(bytes, start, end, (a, z) => {
        fieldBounds(bytes, a, z, from, to);
        hs = builder.listIdOfBytes(bytes, from[5]!, to[5]!, hs);
        types = builder.listIdOfBytes(bytes, from[6]!, to[6]!, types);
        builder.addRelationship(
          numberOfBytes(bytes, from[0]!, to[0]!) ?? -1,
          numberOfBytes(bytes, from[1]!, to[1]!) ?? -1,
          times.at(bytes, from[7]!, to[7]!),
          to[3]! > from[3]! ? exactNumberOfBytes(bytes, from[3]!, to[3]!) : null,
          numberOfBytes(bytes, from[4]!, to[4]!),
          hs,
          types,
          bytes.subarray(from[2], to[2]),
        );
      });
    },
    afterBlock,
  );
}

/** Where a staged timestamp of whole seconds, `YYYY-MM-DDTHH:MM:SSZ`, has other bytes than digits. */
const ISO_SECONDS = '0000-00-00T00:00:00Z';

/**
 * Staged timestamps (ISO 8601 UTC) as epoch milliseconds, as the engine gives them back (NaN: none;
 * NaN too for text no date is, which the builder refuses). Most are of whole seconds and of few
 * distinct days: those are read from their bytes, each day's midnight parsed once.
 */
class StagedTimes {
  private readonly days = new Map<number, number>();

  at(bytes: Buffer, start: number, end: number): number {
    if (end === start) return NaN;
    if (end - start === ISO_SECONDS.length && this.wholeSeconds(bytes, start)) {
      const digits = (from: number, count: number) => {
        let v = 0;
        for (let i = from; i < from + count; i++) v = v * 10 + bytes[start + i]! - 48;
        return v;
      };
      const key = digits(0, 4) * 10_000 + digits(5, 2) * 100 + digits(8, 2);
      let midnight = this.days.get(key);
      if (midnight === undefined) {
        midnight = Date.parse(`${bytes.toString('latin1', start, start + 10)}T00:00:00Z`);
        this.days.set(key, midnight);
      }
      const [h, m, s] = [digits(11, 2), digits(14, 2), digits(17, 2)];
      if (h < 24 && m < 60 && s < 60) return midnight + ((h * 60 + m) * 60 + s) * 1000;
    }
    return Date.parse(bytes.toString('utf8', start, end));
  }

  private wholeSeconds(bytes: Buffer, start: number): boolean {
    for (let i = 0; i < ISO_SECONDS.length; i++) {
      const want = ISO_SECONDS.charCodeAt(i);
      const b = bytes[start + i]!;
      if (want === 48 ? b < 48 || b > 57 : b !== want) return false;
    }
    return true;
  }
}

/**
 * Calls `line` for every data line of `table`'s staging file (a relationship's ends are columns
 * `from` and `to`) with where the fields `wanted` are in `bytes`: field i is `bytes[at[i],
 * at[i + wanted.length])`. The bytes past the last field wanted are not looked at.
 */
async function eachStagedLine(
  stagingDir: string,
  table: TableName,
  wanted: readonly string[],
  signal: AbortSignal,
  line: (bytes: Buffer, at: Int32Array) => void,
): Promise<void> {
  const ends = TABLES[table].kind === 'rel' ? ['from', 'to'] : [];
  const all = [...ends, ...stagedColumns(table)];
  const columnOf = wanted.map((name) => all.indexOf(name));
  if (columnOf.includes(-1)) throw new Error(`the ${table} table has no column among ${wanted.join(', ')}`);
  const fieldFrom = new Int32Array(Math.max(...columnOf) + 1);
  const fieldTo = new Int32Array(fieldFrom.length);
  const n = wanted.length;
  const at = new Int32Array(2 * n);
  await readStagingBlocks(
    path.join(stagingDir, stagingFile(table)),
    (header) => {
      const names = header.split(STAGING_DELIMITER);
      if (names.slice(0, ends.length).join(',') !== ends.join(','))
        throw new Error(`staged ${table} header does not begin with ${ends.join(', ')}`);
      checkStagedHeader(table, names.slice(ends.length));
    },
    (bytes, start, end) =>
      eachLineOf(bytes, start, end, (from, to) => {
        fieldBounds(bytes, from, to, fieldFrom, fieldTo);
        for (let i = 0; i < n; i++) {
          at[i] = fieldFrom[columnOf[i]!]!;
          at[i + n] = fieldTo[columnOf[i]!]!;
        }
        line(bytes, at);
      }),
    () => signal.throwIfAborted(),
  );
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

/**
 * The search rows of a staged import, read from its Company staging file: what a store's
 * scanSearchRows gives once that staging is loaded (cypher/search/scan-companies.cypher through
 * toSearchRow), so that an import can build the search index while the store loads the same data.
 */
import path from 'node:path';
import type { SearchName, SearchRow } from '../domain/search-row';
import { loadQuery } from './cypher-files';
import { toSearchName, toSearchRow } from './mappers';
import type { Props } from './mappers';
import { asLoaded, checkStagedHeader, readStagingFile } from './staging-file';
import { STAGING_DELIMITER, TABLES, stagingFile } from './tables';
import type { ColumnType } from './tables';

/** Rows per batch, as the stores' own scans hand them out. */
const BATCH_ROWS = 2_000;

/**
 * Calls `onBatch` with every company of the staged Company table as a search row, in file order, a
 * batch at a time; a promise it returns is waited for before the next batch (as
 * GraphStore.scanSearchRows). Throws for a staging file whose header is not the Company table's.
 */
export async function scanStagedSearchRows(
  stagingDir: string,
  onBatch: (rows: SearchRow[]) => void | Promise<void>,
  batchRows = BATCH_ROWS,
): Promise<void> {
  const decode = stagedSearchRowDecoder();
  await batchedRows(
    path.join(stagingDir, stagingFile('Company')),
    (fields, line) => {
      if (line > 1) return decode(fields);
      checkStagedHeader('Company', fields);
      return null;
    },
    onBatch,
    batchRows,
  );
}

/**
 * Calls `onBatch` with every company of `file` as a search row, a batch at a time, as
 * scanStagedSearchRows does: a file the embedded engine wrote from its Company table
 * (`search/export-companies`), tab-separated and without quotes, its first line naming its columns,
 * every column the search scan reads (`search/scan-companies-range`) among them, each value in the
 * staging's text. Throws for a file without them, or a line of another number of fields (a value
 * the engine quoted, holding a tab or a line break, which no staged value holds).
 */
export async function scanExportedSearchRows(
  file: string,
  onBatch: (rows: SearchRow[]) => void | Promise<void>,
  batchRows = BATCH_ROWS,
): Promise<void> {
  let decode: ((fields: readonly string[]) => SearchRow) | null = null;
  let columns = 0;
  await batchedRows(
    file,
    (fields, line) => {
      if (line === 1) {
        decode = exportedSearchRowDecoder(fields);
        columns = fields.length;
        return null;
      }
      if (fields.length !== columns)
        throw new Error(`${file}: line ${line} has ${fields.length} fields, not the header's ${columns}`);
      return decode!(fields);
    },
    onBatch,
    batchRows,
  );
  if (!decode) throw new Error(`${file} holds no header`);
}

/** The search row of a line of an exported file whose first line is `header` (see scanExportedSearchRows). */
function exportedSearchRowDecoder(header: readonly string[]): (fields: readonly string[]) => SearchRow {
  const used = [...scannedProperties()].map((name) => {
    const at = header.indexOf(name);
    const type = COMPANY_TYPES.get(name);
    if (at < 0 || !type) throw new Error(`the exported companies have no column ${name}`);
    return { name, type, at };
  });
  return (fields) => {
    const row: Props = {};
    for (const { name, type, at } of used) row[name] = asLoaded(fields[at]!, type);
    return toSearchRow(row);
  };
}

/**
 * Hands `onBatch` the rows `decode` makes of the lines of `file` (null: a line that makes none),
 * `batchRows` at a time, in file order; a promise it returns is waited for before the next batch.
 */
async function batchedRows(
  file: string,
  decode: (fields: string[], line: number) => SearchRow | null,
  onBatch: (rows: SearchRow[]) => void | Promise<void>,
  batchRows: number,
): Promise<void> {
  let batch: SearchRow[] = [];
  const full: SearchRow[][] = [];
  await readStagingFile(
    file,
    (fields, line) => {
      const row = decode(fields, line);
      if (!row) return;
      batch.push(row);
      if (batch.length >= batchRows) {
        full.push(batch);
        batch = [];
      }
    },
    // Batches are handed over between chunks, one after another, each once the one before is taken.
    async () => {
      for (const rows of full.splice(0)) await onBatch(rows);
    },
  );
  if (batch.length > 0) await onBatch(batch);
}

/**
 * The search row of a staged Company row, given its fields: only the columns the scan reads are
 * decoded, by their place in the staged row.
 */
export function stagedSearchRowDecoder(): (fields: readonly string[]) => SearchRow {
  const scanned = scannedProperties();
  const used = TABLES.Company.columns.flatMap(([name, type], at) =>
    scanned.has(name) ? [{ name, type, at }] : [],
  );
  return (fields) => {
    const staged: Props = {};
    for (const { name, type, at } of used) staged[name] = asLoaded(fields[at] ?? '', type);
    return toSearchRow(staged);
  };
}

/** The search rows of whole Company staging lines (no header), each ended by a line feed. */
export function decodeStagedCompanyLines(
  text: string,
  decode: (fields: readonly string[]) => SearchRow = stagedSearchRowDecoder(),
): SearchRow[] {
  const rows: SearchRow[] = [];
  eachLine(text, 'staged Company lines', (line) => rows.push(decode(line.split(STAGING_DELIMITER))));
  return rows;
}

/**
 * A company's names as its Company staging line holds them (the `name` and `aliases` columns), on a
 * line of their own: what an import hands its search index's build while it reads companies.csv,
 * long before the Company lines (see CompanySink.names).
 */
export function stagedNamesLine(stagedName: string, stagedAliases: string): string {
  return `${stagedName}${STAGING_DELIMITER}${stagedAliases}\n`;
}

/** The names of lines made by stagedNamesLine, as decodeStagedCompanyLines gives them in its rows. */
export function decodeStagedNames(text: string): SearchName[] {
  const names: SearchName[] = [];
  eachLine(text, 'staged names', (line) => {
    const tab = line.indexOf(STAGING_DELIMITER);
    if (tab < 0) throw new Error('a staged names line without its aliases');
    names.push(
      toSearchName({
        name: asLoaded(line.slice(0, tab), NAME_TYPE),
        aliases: asLoaded(line.slice(tab + 1), ALIASES_TYPE),
      }),
    );
  });
  return names;
}

const COMPANY_TYPES: ReadonlyMap<string, ColumnType> = new Map(TABLES.Company.columns);
const NAME_TYPE = COMPANY_TYPES.get('name')!;
const ALIASES_TYPE = COMPANY_TYPES.get('aliases')!;

/** Hands `take` each line of `text` (whole lines, each ended by a line feed), without its line feed. */
function eachLine(text: string, what: string, take: (line: string) => void): void {
  let p = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', p)) {
    take(text.slice(p, nl));
    p = nl + 1;
  }
  if (p < text.length) throw new Error(`${what} end within a line`);
}

/**
 * The Company properties the embedded store's search scan reads (`c.<name>` in the query it runs,
 * range by range): the staged columns decoded, so that a property the scan starts reading is decoded
 * here too.
 */
function scannedProperties(): Set<string> {
  const { text } = loadQuery('search/scan-companies-range', 'embedded');
  return new Set([...text.matchAll(/\bc\.(\w+)/g)].map((m) => m[1]!));
}

import type { ImportOutcome } from '../import/import-directory';

/** Rows a second, as the import's progress and summary print them. */
export const rate = (rows: number, ms: number) =>
  Math.round(rows / Math.max(ms / 1000, 0.001)).toLocaleString('en-US');

/**
 * What an import read and what the store holds after it. The rows counted as imported are the input
 * files' data rows less those rejected, the rate is of the rows read: what a user can check against
 * the files. The store's rows differ (each relationship is an Edge row and a SUPPLIES row, evidence,
 * identifiers and addresses live inside other rows, cluster relationships are derived), so they are
 * listed apart.
 */
export function importSummary(outcome: ImportOutcome, ms: number, bulkFiles: boolean): string {
  const read = Object.values(outcome.inputRows).reduce((a, b) => a + b, 0);
  const files = Object.keys(outcome.inputRows).length;
  const rejected = outcome.rejected.length;
  // A dry run validated every row it read; an import took those that were not rejected.
  const rows = outcome.applied ? read - rejected : read;
  const n = (x: number) => x.toLocaleString('en-US');
  const verb = !outcome.applied ? 'Dry run: validated' : bulkFiles ? 'Wrote bulk-load files of' : 'Imported';
  const from = `${n(rows)} row${rows === 1 ? '' : 's'} from ${files} file${files === 1 ? '' : 's'}`;
  const out = [
    `${verb} ${from}${rejected > 0 ? ` (${n(rejected)} rejected)` : ''} in ${(ms / 1000).toFixed(1)} s ` +
      `(${rate(read, ms)} rows/s; validate+derive ${(outcome.stageMs / 1000).toFixed(1)} s` +
      `${outcome.applied ? `, load ${(outcome.loadMs / 1000).toFixed(1)} s` : ''}).`,
  ];
  for (const [file, count] of Object.entries(outcome.inputRows)) out.push(`  ${file}: ${n(count)} rows read`);
  const { evidence, identifiers, addresses } = outcome.items;
  out.push(!outcome.applied ? 'The store would hold:' : bulkFiles ? 'The files hold:' : 'The store holds:');
  for (const [table, count] of Object.entries(outcome.counts))
    out.push(
      `  ${table}: ${n(count)}${DERIVED_TABLES.has(table) ? ' (derived from relationships and clusters)' : ''}`,
    );
  out.push(
    `  evidence items: ${n(evidence)}`,
    `  identifiers: ${n(identifiers)}`,
    `  addresses: ${n(addresses)}`,
  );
  return `${out.join('\n')}\n`;
}

/** Store tables made by the import rather than read from a file. */
const DERIVED_TABLES: ReadonlySet<string> = new Set(['CLUSTER_SUPPLIES']);

/** What staging reports to its callers, and how it stops. */
import type { TableName } from '../store/tables';

/** Progress of an import or of dataset generation. */
export interface ImportProgress {
  phase: string;
  file?: string;
  rows: number;
  totalRowsHint?: number;
}

/** A row that was not loaded, and why. `line` is the physical line in `file` (header = 1). */
export interface RejectedRow {
  file: string;
  line: number;
  reason: string;
}

/** Items staged inside JSON columns rather than as rows of their own. */
export interface StagedItems {
  /** Evidence items, on their Edge rows. */
  evidence: number;
  /** Identifiers, on their Company rows. */
  identifiers: number;
  /** Addresses, on their Company rows. */
  addresses: number;
}

export interface StageResult {
  /** Rows written per staging table. */
  counts: Record<TableName, number>;
  /** Identifiers, addresses and evidence items written inside those rows. */
  items: StagedItems;
  /** Rejected rows, in file read order, then line order. */
  rejected: RejectedRow[];
  /** Values imported as given but worth a look (see StageState.warn), at most 100,000 of them. */
  warnings: RejectedRow[];
  /** Every warning, also those beyond the ones kept. */
  warningCount: number;
  /** Data rows read per input file (header excluded), by file name. */
  inputRows: Record<string, number>;
}

export interface StageOptions {
  /**
   * Most rejected rows tolerated; one more aborts the import. Default 0: an import
   * replaces the live graph, so by default a file set with any rejected row is refused.
   */
  maxRejected?: number;
  /** Called at most about every 50,000 rows. */
  onProgress?: (p: ImportProgress) => void;
  /**
   * Turn evidence into JSON and write the Edge rows in a worker thread.
   * Default: for 50,000 relationships or more when the compiled worker script
   * is present. The staging files are the same either way.
   */
  evidenceWorker?: boolean;
}

/** The import stopped: a file or column is missing or malformed, or too many rows were rejected. */
export class ImportAbortedError extends Error {
  constructor(
    message: string,
    readonly rejected: RejectedRow[],
  ) {
    super(message);
    this.name = 'ImportAbortedError';
  }
}

export const DEFAULT_MAX_REJECTED = 0;

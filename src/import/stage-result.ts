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
  /**
   * Read the second part of evidence.csv on a thread of its own, from the first line after this
   * byte offset (true: about half way), while the staging thread reads the first. Default: when the
   * file holds 32 MiB or more and the evidence worker and the compiled scripts are there. The
   * staging files and rejected rows are the same either way.
   */
  evidenceSplit?: boolean | number;
  /**
   * Hears the Company rows long before they are written: once the addresses are read, every column of
   * a company but its four counts is final. An import builds its search index from them meanwhile.
   */
  companies?: CompanySink;
}

/** What StageOptions.companies hears, in this order. */
export interface CompanySink {
  /**
   * Each company's name and aliases, as its Company line will hold them (stagedNamesLine), in the
   * order of the lines, a piece at a time while companies.csv is read (the buffer is the sink's):
   * what needs only the names can be done before the first line comes. Never waited for.
   */
  names?(text: Buffer): void;
  /**
   * Whole Company staging lines (no header), in the staging file's order, with the four count columns
   * (count_suppliers, count_customers, count_supplier_evidence, count_customer_evidence) empty. The
   * buffer is the sink's to keep. A promise returned is waited for before the next lines, while the
   * staging reads its other files: a sink that is slower than the staging keeps few lines waiting.
   */
  lines(text: Buffer): void | Promise<void>;
  /**
   * Every input file is read: the staging now waits for what the sink still has to do (it hands
   * over the rest of the lines without waiting for them to be taken).
   */
  readAll?(): void;
  /** Every Company line is handed over (after readAll when the lines took longer than the files). */
  allLines?(): void;
  /** The four counts of every company, in the same order, once they are derived. */
  counts(counts: CompanyCountColumns): void;
}

/** The count columns of the Company table, by company in staging order. */
export interface CompanyCountColumns {
  suppliers: Int32Array;
  customers: Int32Array;
  supplierEvidence: Float64Array;
  customerEvidence: Float64Array;
}

/** The import stopped: a file or column is missing or malformed, or too many rows were rejected. */
export class ImportAbortedError extends Error {
  constructor(
    message: string,
    readonly rejected: RejectedRow[],
    /** The warnings of the rows loaded before the import stopped (the first of them, see warningCount). */
    readonly warnings: RejectedRow[] = [],
    readonly warningCount = warnings.length,
  ) {
    super(message);
    this.name = 'ImportAbortedError';
  }
}

export const DEFAULT_MAX_REJECTED = 0;

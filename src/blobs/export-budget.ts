import { AppError } from '../domain/errors';

/**
 * Export files would take more than the disk budget (EXPORT_MAX_BYTES). The run
 * ends FAILED with this message instead of filling the disk; its files are removed.
 * The message does not say how much is in use: that is every key's files together,
 * which one key's client has no business learning; the log says it.
 */
export class ExportBudgetExceeded extends AppError {
  constructor(
    readonly maxBytes: number,
    /** Bytes export files took on disk when it was stopped, this one's so far included. */
    readonly usedBytes?: number,
  ) {
    super(
      'UNAVAILABLE',
      `The export was stopped: its files would pass the disk budget for exports ` +
        `(EXPORT_MAX_BYTES, ${maxBytes.toLocaleString('en-US')} bytes for the files of every API key together). ` +
        'Its files were removed; start it again once older exports have expired, or ask for fewer tiers.',
    );
  }
}

/**
 * Export files of one API key would take more than its share of the disk budget
 * (EXPORT_MAX_BYTES_PER_KEY): the run ends FAILED with this message, its files removed.
 * What it says of use is the key's own.
 */
export class ExportKeyShareExceeded extends AppError {
  constructor(
    readonly maxBytes: number,
    /** Bytes the key's export files took when it was stopped, this one's so far included. */
    readonly usedBytes: number,
  ) {
    super(
      'UNAVAILABLE',
      `The export was stopped: its files would pass the disk share of one API key for exports ` +
        `(EXPORT_MAX_BYTES_PER_KEY, ${maxBytes.toLocaleString('en-US')} bytes; this key's export files take ` +
        `${usedBytes.toLocaleString('en-US')}). Its files were removed; start it again once this key's older exports have expired, or ask for fewer tiers.`,
    );
  }
}

/** The disk of the export files is full (or the account's quota spent): the run ends FAILED saying so. */
export class ExportDiskFull extends AppError {
  constructor(readonly reason: 'ENOSPC' | 'EDQUOT') {
    super(
      'UNAVAILABLE',
      `The export was stopped: the disk that holds export files is full (${reason}). ` +
        'Its files were removed; start it again once space has been freed (EXPORT_MAX_BYTES keeps exports within a budget).',
    );
  }
}

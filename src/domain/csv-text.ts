/**
 * CSV records as RFC 4180 writes them: fields separated by commas, records ended by
 * CRLF, each text field encoded by the project's one field encoder (quotedField, which
 * the demo generator uses too: quoted when it holds a comma, a quote, a line feed or
 * a carriage return). Null, undefined and '' are empty fields.
 *
 * Exports write hundreds of thousands of records, so a record is one string built by
 * concatenation.
 */

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES_RE = /[",\r\n]/;

/** Encodes one text as an RFC 4180 field, quoting only when needed. */
export function quotedField(v: string): string {
  return NEEDS_QUOTES_RE.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** What a spreadsheet reads as the start of a formula (or of a DDE call) in a text cell. */
const FORMULA_START_RE = /^[=+\-@\t\r]/;

/**
 * A text as a spreadsheet shows it, never runs it: one that begins like a formula gets a leading `'`,
 * which makes the cell text. Company names and evidence come from third parties: opened in Excel,
 * `=HYPERLINK(...)` in a name would be a live link carrying the sheet's data away.
 */
export function spreadsheetText(v: string): string {
  return FORMULA_START_RE.test(v) ? `'${v}` : v;
}

/** `forSpreadsheet`: text fields pass through {@link spreadsheetText} first. */
export function csvField(value: CsvValue, forSpreadsheet = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  return quotedField(forSpreadsheet ? spreadsheetText(value) : value);
}

/** One record, CRLF included, of `record`'s values in the order of `columns`. */
export function csvRecord(
  columns: readonly string[],
  record: Readonly<Record<string, CsvValue>>,
  forSpreadsheet = false,
): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    if (i > 0) line += ',';
    line += csvField(record[columns[i]!], forSpreadsheet);
  }
  return `${line}\r\n`;
}

/** The header record: the column names. */
export function csvHeader(columns: readonly string[]): string {
  return `${columns.map((c) => csvField(c)).join(',')}\r\n`;
}

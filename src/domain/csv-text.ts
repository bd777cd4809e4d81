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

export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  return quotedField(value);
}

/** One record, CRLF included, of `record`'s values in the order of `columns`. */
export function csvRecord(columns: readonly string[], record: Readonly<Record<string, CsvValue>>): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    if (i > 0) line += ',';
    line += csvField(record[columns[i]!]);
  }
  return `${line}\r\n`;
}

/** The header record: the column names. */
export function csvHeader(columns: readonly string[]): string {
  return `${columns.map(csvField).join(',')}\r\n`;
}

/**
 * CSV text as RFC 4180 writes it: fields separated by commas, records ended by CRLF,
 * and a field quoted (its quotes doubled) when it holds a comma, a quote, a line feed
 * or a carriage return. Null, undefined and '' are empty fields.
 *
 * Exports write hundreds of thousands of records, so a record is one string built by
 * concatenation, and a field is scanned once for the characters that need quotes.
 */

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",\n\r]/;

export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
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

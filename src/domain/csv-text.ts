/**
 * CSV records as RFC 4180 writes them: fields separated by commas, records ended by
 * CRLF, each text field encoded by the project's one field encoder (quotedField, which
 * the demo generator uses too: quoted when it holds a comma, a quote, a line feed or
 * a carriage return). Null, undefined and '' are empty fields.
 *
 * A record is one string built by concatenation (csvRecord); exports, hundreds of
 * thousands of records, write theirs as bytes instead (CsvBytes).
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

const COMMA = 0x2c;
const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/**
 * CSV records written straight into UTF-8 bytes, each field as csvField encodes it. An export's
 * rows are built here rather than as one string per batch: encoding a long concatenation costs
 * as much again as building it (it is flattened first), and a plain ASCII field, most of an
 * export's, is copied a character at a time without a test by regular expression.
 */
export class CsvBytes {
  private buf: Buffer;
  private at = 0;

  /** `forSpreadsheet`: text fields as csvField gives them for a spreadsheet. */
  constructor(
    private readonly forSpreadsheet = false,
    size = 1 << 16,
  ) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** One field, as `csvField(value, forSpreadsheet)`. */
  field(value: CsvValue): void {
    if (value === null || value === undefined) return;
    // A number or a boolean is never marked as text, not even a negative number for a spreadsheet.
    if (typeof value !== 'string') this.plain(String(value), false);
    else if (!this.plain(value, this.forSpreadsheet)) this.text(csvField(value, this.forSpreadsheet));
  }

  /** One record, CRLF included, as `csvRecord(columns, record, forSpreadsheet)`. */
  record(columns: readonly string[], record: Readonly<Record<string, CsvValue>>): void {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) this.comma();
      this.field(record[columns[i]!]);
    }
    this.end();
  }

  /** Bytes already encoded (see encoded). */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** Fields encoded once, separated by commas, for a record writer that shows them many times. */
  encoded(...values: CsvValue[]): Buffer {
    return Buffer.from(values.map((v) => csvField(v, this.forSpreadsheet)).join(','));
  }

  comma(): void {
    this.room(1);
    this.buf[this.at++] = COMMA;
  }

  /** The end of a record. */
  end(): void {
    this.room(2);
    this.buf[this.at++] = CR;
    this.buf[this.at++] = LF;
  }

  /** What was written since the last take, as a buffer of its own; the writer starts again empty. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.at));
    this.at = 0;
    return out;
  }

  /**
   * Writes `s` as it is when it is ASCII and needs no quotes (nor, with `sheet`, the mark of a
   * text that starts like a formula); otherwise writes nothing and returns false.
   */
  private plain(s: string, sheet: boolean): boolean {
    const n = s.length;
    if (sheet && FORMULA_START_RE.test(s)) return false;
    this.room(n);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const ch = s.charCodeAt(i);
      if (ch >= 0x80 || ch === COMMA || ch === QUOTE || ch === CR || ch === LF) return false;
      b[at++] = ch;
    }
    this.at = at;
    return true;
  }

  private text(s: string): void {
    this.room(3 * s.length);
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}

/** The header record: the column names. */
export function csvHeader(columns: readonly string[]): string {
  return `${columns.map((c) => csvField(c)).join(',')}\r\n`;
}

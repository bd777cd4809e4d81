/**
 * Reads one input file for the stager: checks its header against the format,
 * hands each well-formed row to the file's handler and turns the handler's
 * ValueErrors into rejected rows with their physical line numbers.
 */
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readCsvFile } from '../csv';
import type { CsvRange, CsvRangeEnd, CsvSink, ReadProgress } from '../csv';
import { INPUT_FILES, ValueError, excerpt } from '../format';
import type { InputFile, InputFileName } from '../format';
import { PROGRESS_EVERY } from './state';
import type { StageState } from './state';

// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const CTL_RE = /[\x00-\x1f\x7f-\x9f\ufffd]/;
/** Control characters not even free text may hold (tab and line breaks become spaces there). */
// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const HARD_CTL_RE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]/;
const SOFT_CTL_RE = /[\t\r\n]+/g;

/** A row handler for one input file, built once the header is known. */
export interface RowHandler {
  /** Column being checked, for the rejection reason; empty for row-level rules. */
  at: string;
  row(f: string[], line: number): void;
  /** Called when a row is rejected, with the key it declared if it got that far. */
  onReject?(line: number): void;
  /** Called when a row is rejected before row() saw it (field count, control characters). */
  onRejectRaw?(f: string[], line: number): void;
}

/** Returns the trimmed value of field i (empty when the column is absent). */
export function val(f: string[], i: number): string {
  const s = f[i];
  if (s === undefined) return '';
  if (s.length > 0 && (s.charCodeAt(0) === 32 || s.charCodeAt(s.length - 1) === 32)) return s.trim();
  return s;
}

export function need(f: string[], i: number): string {
  const s = val(f, i);
  if (s.length === 0) throw new ValueError('missing value');
  return s;
}

/** Where a read of part of an input file ends, and what to tell of its header (stage/evidence.ts). */
export interface InputRange {
  /** Byte offset to stop at; the file's end by default. */
  end?: number;
  /** Hears the header's column names once they are checked. */
  onHeader?: (names: string[]) => void;
}

/**
 * Reads one input file: checks the header, then hands each well-formed row to
 * the handler and turns its ValueErrors into rejections. Returns where the read
 * stopped (a range may stop inside the file), or null when there is no file.
 */
export async function readInputFile(
  state: StageState,
  name: InputFileName,
  makeHandler: (ix: (col: string) => number) => RowHandler,
  range: InputRange = {},
): Promise<CsvRangeEnd | null> {
  const spec: InputFile = INPUT_FILES[name];
  const path = join(state.inputDir, spec.file);
  const exists = await stat(path).then(
    (st) => st.isFile(),
    () => false,
  );
  if (!exists) {
    if (spec.required) throw state.aborted(`required file ${spec.file} is missing`);
    return null;
  }
  const file = spec.file;
  let rows: RowReader | null = null;
  const fatal = (msg: string): never => {
    throw state.aborted(`${file}: ${msg}`);
  };
  const sink: CsvSink = {
    row: (f, line, suspect) => {
      if (rows !== null) return rows.row(f, line, suspect);
      const names = f.map((h) => h.trim());
      const known = new Set(spec.columns.map((c) => c.name));
      const seen = new Set<string>();
      // UTF-16 read as UTF-8: a NUL beside every ASCII letter of the header.
      if (names.some((h) => h.includes('\u0000')))
        fatal('is not UTF-8 (its header holds NUL characters, as UTF-16 text does): save it as UTF-8');
      for (const h of names) {
        if (!known.has(h)) fatal(`unknown column ${excerpt(h)} (known: ${[...known].join(', ')})`);
        if (seen.has(h)) fatal(`column ${excerpt(h)} appears twice`);
        seen.add(h);
      }
      for (const c of spec.columns)
        if (c.required && !seen.has(c.name)) fatal(`required column "${c.name}" is missing`);
      rows = new RowReader(state, name, names, makeHandler);
      range.onHeader?.(names);
    },
    error: (line, reason) => {
      if (rows === null) fatal(`header row is not valid CSV: ${reason}`);
      rows?.error(line, reason);
    },
  };
  const end = await readRows(state, path, sink, () => rows?.rows ?? 0, { end: range.end });
  if (rows === null) {
    if (spec.required) fatal('the file is empty (no header row)');
    // An optional file with nothing in it, as tools write when they have nothing to export: no rows,
    // as if it were absent, and said in the report.
    state.warn(file, 1, 'the file is empty (no header row); read as no rows');
    return end;
  }
  const n = (rows as RowReader).rows;
  state.inputRows[file] = n;
  if (range.end === undefined) state.progress({ phase: 'read', file, rows: n, totalRowsHint: n });
  return end;
}

/**
 * Reads the rows of an input file from byte `start`, a record boundary past its header, to its end;
 * `names` are the header's columns as readInputFile checked them. Lines count from 1 at `start`.
 * Returns the number of rows read and where the read ended.
 */
export async function readInputRows(
  state: StageState,
  name: InputFileName,
  names: string[],
  start: number,
  makeHandler: (ix: (col: string) => number) => RowHandler,
): Promise<{ rows: number; end: CsvRangeEnd }> {
  const rows = new RowReader(state, name, names, makeHandler);
  const sink: CsvSink = {
    row: (f, line, suspect) => rows.row(f, line, suspect),
    error: (line, reason) => rows.error(line, reason),
  };
  const end = await readRows(state, join(state.inputDir, INPUT_FILES[name].file), sink, () => rows.rows, {
    start,
  });
  return { rows: rows.rows, end };
}

/** The data rows of one input file, once its header is known: each goes to the handler or is rejected. */
class RowReader {
  rows = 0;
  private readonly file: string;
  private readonly ncols: number;
  private readonly freeText: boolean[];
  private readonly handler: RowHandler;

  constructor(
    private readonly state: StageState,
    name: InputFileName,
    private readonly names: string[],
    makeHandler: (ix: (col: string) => number) => RowHandler,
  ) {
    const spec = INPUT_FILES[name];
    this.file = spec.file;
    this.ncols = names.length;
    this.freeText = names.map((h) => spec.columns.some((c) => c.name === h && c.freeText === true));
    this.handler = makeHandler((c) => names.indexOf(c));
  }

  row(f: string[], line: number, suspect: boolean): void {
    // A row of empty fields (",,,,", as spreadsheets leave below the data) holds nothing: skipped
    // like a blank line, not rejected. Most rows' first field is not empty, so this costs one test.
    if (f[0]!.trim() === '' && f.every((v) => v.trim() === '')) return;
    this.rows++;
    const { state, file, ncols } = this;
    const h = this.handler;
    if (f.length !== ncols) {
      h.onRejectRaw?.(f, line);
      state.reject(file, line, `expected ${ncols} fields, found ${f.length}`);
      return;
    }
    if (suspect) {
      for (let k = 0; k < ncols; k++) {
        const v = f[k] as string;
        if (!CTL_RE.test(v)) continue;
        if (this.freeText[k] === true && !HARD_CTL_RE.test(v)) {
          f[k] = v.replace(SOFT_CTL_RE, ' ');
          continue;
        }
        const bad = HARD_CTL_RE.exec(v) ?? CTL_RE.exec(v);
        const ch = bad?.[0] ?? '';
        const what =
          ch === '\ufffd'
            ? 'invalid UTF-8 (U+FFFD)'
            : `control character U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
        h.onRejectRaw?.(f, line);
        state.reject(file, line, `column "${this.names[k] ?? ''}": ${what}`);
        return;
      }
    }
    h.at = '';
    try {
      h.row(f, line);
      state.endRow(true);
    } catch (e) {
      state.endRow(false);
      if (!(e instanceof ValueError)) throw e;
      h.onReject?.(line);
      state.reject(file, line, h.at === '' ? e.message : `column "${h.at}": ${e.message}`);
    }
  }

  error(line: number, reason: string): void {
    this.rows++;
    this.state.reject(this.file, line, `malformed CSV: ${reason}`);
  }
}

/** Reads a file's records into `sink`, flushing the writers and reporting progress as it goes. */
async function readRows(
  state: StageState,
  path: string,
  sink: CsvSink,
  rows: () => number,
  range: CsvRange,
): Promise<CsvRangeEnd> {
  const file = basename(path);
  let reported = 0;
  state.progress({ phase: 'read', file, rows: 0 });
  const end = await readCsvFile(
    path,
    sink,
    async (p: ReadProgress) => {
      await state.flushAll();
      // Rows another thread reads of the same file at the same time count too (stage/evidence.ts).
      const beside = state.readBeside;
      const mine = rows();
      const n = mine + beside.rows;
      if (n - reported >= PROGRESS_EVERY) {
        reported = n;
        const read = p.bytesRead - (range.start ?? 0) + beside.bytes;
        state.onRead?.(mine, p.bytesRead - (range.start ?? 0));
        const hint = read > 0 ? Math.round((n * p.totalBytes) / read) : undefined;
        state.progress({ phase: 'read', file, rows: n, totalRowsHint: hint });
      }
    },
    range,
  );
  return end;
}

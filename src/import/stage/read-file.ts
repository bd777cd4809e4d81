/**
 * Reads one input file for the stager: checks its header against the format,
 * hands each well-formed row to the file's handler and turns the handler's
 * ValueErrors into rejected rows with their physical line numbers.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readCsvFile } from '../csv';
import type { CsvSink, ReadProgress } from '../csv';
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

/**
 * Reads one input file: checks the header, then hands each well-formed row to
 * the handler and turns its ValueErrors into rejections.
 */
export async function readInputFile(
  state: StageState,
  name: InputFileName,
  makeHandler: (ix: (col: string) => number) => RowHandler,
): Promise<void> {
  const spec: InputFile = INPUT_FILES[name];
  const path = join(state.inputDir, spec.file);
  const exists = await stat(path).then(
    (st) => st.isFile(),
    () => false,
  );
  if (!exists) {
    if (spec.required) throw state.aborted(`required file ${spec.file} is missing`);
    return;
  }
  const file = spec.file;
  let rows = 0;
  let handler: RowHandler | null = null;
  let ncols = 0;
  let freeText: boolean[] = [];
  let names: string[] = [];
  const fatal = (msg: string): never => {
    throw state.aborted(`${file}: ${msg}`);
  };
  const sink: CsvSink = {
    row: (f, line, suspect) => {
      if (handler === null) {
        names = f.map((h) => h.trim());
        ncols = names.length;
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
        freeText = names.map((h) => spec.columns.some((c) => c.name === h && c.freeText === true));
        handler = makeHandler((c) => names.indexOf(c));
        return;
      }
      // A row of empty fields (",,,,", as spreadsheets leave below the data) holds nothing: skipped
      // like a blank line, not rejected. Most rows' first field is not empty, so this costs one test.
      if (f[0]!.trim() === '' && f.every((v) => v.trim() === '')) return;
      rows++;
      const h: RowHandler = handler;
      if (f.length !== ncols) {
        h.onRejectRaw?.(f, line);
        state.reject(file, line, `expected ${ncols} fields, found ${f.length}`);
        return;
      }
      if (suspect) {
        for (let k = 0; k < ncols; k++) {
          const v = f[k] as string;
          if (!CTL_RE.test(v)) continue;
          if (freeText[k] === true && !HARD_CTL_RE.test(v)) {
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
          state.reject(file, line, `column "${names[k] ?? ''}": ${what}`);
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
    },
    error: (line, reason) => {
      if (handler === null) fatal(`header row is not valid CSV: ${reason}`);
      rows++;
      state.reject(file, line, `malformed CSV: ${reason}`);
    },
  };
  let reported = 0;
  state.progress({ phase: 'read', file, rows: 0 });
  await readCsvFile(path, sink, async (p: ReadProgress) => {
    await state.flushAll();
    if (rows - reported >= PROGRESS_EVERY) {
      reported = rows;
      const hint = p.bytesRead > 0 ? Math.round((rows * p.totalBytes) / p.bytesRead) : undefined;
      state.progress({ phase: 'read', file, rows, totalRowsHint: hint });
    }
  });
  if (handler === null) {
    if (spec.required) fatal('the file is empty (no header row)');
    // An optional file with nothing in it, as tools write when they have nothing to export: no rows,
    // as if it were absent, and said in the report.
    state.warn(file, 1, 'the file is empty (no header row); read as no rows');
    return;
  }
  state.inputRows[file] = rows;
  state.progress({ phase: 'read', file, rows, totalRowsHint: rows });
}

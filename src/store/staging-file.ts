/**
 * Reads a staging file (src/store/tables.ts): tab-separated lines with nothing
 * quoted, so a row ends at the next line feed and a field at the next tab.
 */
import { closeSync, createReadStream, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { NEVER_STAGED, STAGING_DELIMITER, SUCCESS_MARKER, TABLES } from './tables';
import type { ColumnType, TableName } from './tables';
import type { Props } from './mappers';

/** Bytes read at a time: small enough for the decoded text to stay a young-generation string. */
const READ_CHUNK_BYTES = 1 << 16;
const LINE_FEED = 10;
const TAB = 9;

/**
 * Calls `row` with the fields and the line number (1 = header) of every line
 * of `file`, in order. `afterChunk` runs after each chunk's rows, which lets
 * the caller apply backpressure.
 */
export async function readStagingFile(
  file: string,
  row: (fields: string[], line: number) => void,
  afterChunk?: () => Promise<void> | void,
): Promise<void> {
  await readStagingLines(file, (text, line) => row(text.split(STAGING_DELIMITER), line), afterChunk);
}

/**
 * As readStagingFile, with each line's text unsplit: for a reader that touches
 * a few fields of long lines and passes the rest on as it is.
 */
export async function readStagingLines(
  file: string,
  row: (text: string, line: number) => void,
  afterChunk?: () => Promise<void> | void,
): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let line = 0;
  const take = (text: string, final: boolean): void => {
    const s = rest.length > 0 ? rest + text : text;
    let p = 0;
    // The unfinished row carried over holds no line feed: searching it again for
    // every chunk would make very long rows quadratic.
    for (let nl = s.indexOf('\n', rest.length); nl >= 0; nl = s.indexOf('\n', p)) {
      row(s.slice(p, nl), ++line);
      p = nl + 1;
    }
    rest = s.slice(p);
    if (final && rest.length > 0) {
      row(rest, ++line);
      rest = '';
    }
  };
  for await (const chunk of createReadStream(file, {
    highWaterMark: READ_CHUNK_BYTES,
  }) as AsyncIterable<Buffer>) {
    take(decoder.write(chunk), false);
    if (afterChunk) await afterChunk();
  }
  take(decoder.end(), true);
  if (afterChunk) await afterChunk();
}

/**
 * Calls `line` with where each line of `bytes[start, end)` begins and ends (its line feed left
 * out): whole lines, each ending in a line feed but perhaps the last, as readStagingBlocks gives them.
 */
export function eachLineOf(
  bytes: Buffer,
  start: number,
  end: number,
  line: (from: number, to: number) => void,
): void {
  for (let p = start; p < end;) {
    let nl = bytes.indexOf(LINE_FEED, p);
    if (nl < 0 || nl > end) nl = end;
    line(p, nl);
    p = nl + 1;
  }
}

/** The quote the embedded engine writes around a value it must quote in a file it exports. */
const QUOTED = NEVER_STAGED.charCodeAt(0);

/**
 * Throws unless the block `bytes[start, end)` of `file`, lines a file the embedded engine exported
 * as staging text (exportStatement), holds no quoted value: the engine quotes a value holding a tab
 * or a line break (with NEVER_STAGED, which no staged value holds), and its line is then no longer
 * one row of fields.
 */
export function refuseQuoted(file: string, bytes: Buffer, start: number, end: number): void {
  const quoted = bytes.indexOf(QUOTED, start);
  if (quoted >= 0 && quoted < end) throw new Error(`${file} holds a quoted value: not staging text`);
}

/**
 * Where the first quote the embedded engine wrote in `file` (see refuseQuoted) is, as a byte offset,
 * or -1 when it quoted nothing: whether the file, an export of staging text, can be read as such.
 * `afterBlock` runs after each block looked through (it may throw to stop).
 */
export async function firstQuoted(
  file: string,
  afterBlock?: () => void,
  blockBytes = BLOCK_BYTES,
): Promise<number> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(blockBytes);
    for (let at = 0; ;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return -1;
      const quoted = buf.subarray(0, bytesRead).indexOf(QUOTED);
      if (quoted >= 0) return at + quoted;
      at += bytesRead;
      afterBlock?.();
    }
  } finally {
    await fh.close();
  }
}

/**
 * As refuseQuoted, and throws unless every line of the block holds `fields` fields. The tabs and
 * line feeds are counted natively over the whole block (a long value is not looked at byte by
 * byte): with no value quoted no line holds more tabs than its share, so a count that is off is a
 * line short of fields, which only then is looked for line by line, to name it.
 */
export function checkExportedBlock(
  file: string,
  bytes: Buffer,
  start: number,
  end: number,
  fields: number,
): void {
  refuseQuoted(file, bytes, start, end);
  const count = (byte: number, from: number, to: number) => {
    let n = 0;
    for (let p = bytes.indexOf(byte, from); p >= 0 && p < to; p = bytes.indexOf(byte, p + 1)) n++;
    return n;
  };
  const lines = count(LINE_FEED, start, end) + (bytes[end - 1] === LINE_FEED ? 0 : 1);
  if (count(TAB, start, end) === lines * (fields - 1)) return;
  eachLineOf(bytes, start, end, (a, z) => {
    const n = count(TAB, a, z) + 1;
    if (n !== fields) throw new Error(`${file} holds a line of ${n} fields, not ${fields}`);
  });
}

/**
 * Where the first `from.length` fields of the line `bytes[start, end)` begin (`from`) and end
 * (`to`, a tab or the line's end), as splitting it on tabs gives them: a field past the last one
 * asked for is left out, and a field the line lacks is empty, at its end.
 */
export function fieldBounds(
  bytes: Buffer,
  start: number,
  end: number,
  from: Int32Array,
  to: Int32Array,
): void {
  const count = from.length;
  let field = 0;
  let last = end;
  from[0] = start;
  for (let p = start; p < end; p++) {
    if (bytes[p] !== TAB) continue;
    if (field + 1 >= count) {
      last = p;
      break;
    }
    to[field++] = p;
    from[field] = p + 1;
  }
  to[field] = last;
  for (let f = field + 1; f < count; f++) from[f] = to[f] = end;
}

/** Bytes a block of readStagingBlocks holds at first (a longer line grows it). */
const BLOCK_BYTES = 4 << 20;

/**
 * As readStagingLines, for a reader that keeps lines as their bytes: `header` gets the first line's
 * text, then `block` gets every other line in blocks of whole lines, `bytes[start, end)`, each line
 * ending in a line feed but perhaps the file's last. A block is valid only during the call.
 */
export async function readStagingBlocks(
  file: string,
  header: (text: string) => void,
  block: (bytes: Buffer, start: number, end: number) => void,
  afterBlock?: () => void,
  blockBytes = BLOCK_BYTES,
): Promise<void> {
  const fh = await open(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(Math.max(1, blockBytes));
    let held = 0;
    let headerSeen = false;
    for (;;) {
      if (held === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, held, buf.length - held, null);
      const ended = bytesRead === 0;
      held += bytesRead;
      let from = 0;
      if (!headerSeen) {
        const nl = buf.indexOf(LINE_FEED);
        if (nl < 0 || nl >= held) {
          if (!ended) continue;
          header(buf.toString('utf8', 0, held));
          return;
        }
        header(buf.toString('utf8', 0, nl));
        headerSeen = true;
        from = nl + 1;
      }
      const last = ended ? held : buf.lastIndexOf(LINE_FEED, held - 1) + 1;
      if (last > from) block(buf, from, last);
      if (afterBlock) afterBlock();
      if (ended) return;
      buf.copy(buf, 0, Math.max(from, last), held);
      held -= Math.max(from, last);
    }
  } finally {
    await fh.close();
  }
}

/** The fields of a staging file's header, its first line (of at most 64 KiB), without reading on. */
export function stagedHeader(file: string): string[] {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const n = readSync(fd, head, 0, head.length, 0);
    const nl = head.indexOf(LINE_FEED);
    return head.toString('utf8', 0, nl >= 0 && nl < n ? nl : n).split(STAGING_DELIMITER);
  } finally {
    closeSync(fd);
  }
}

/**
 * The row counts a complete staging directory records in its marker; throws for a
 * directory without one (an import that did not finish staging).
 */
export function stagedCounts(stagingDir: string): Partial<Record<TableName, number>> {
  const marker = path.join(stagingDir, SUCCESS_MARKER);
  if (!existsSync(marker))
    throw new Error(`staging directory ${stagingDir} is incomplete (no ${SUCCESS_MARKER} marker)`);
  return (
    (JSON.parse(readFileSync(marker, 'utf8')) as { counts?: Partial<Record<TableName, number>> }).counts ?? {}
  );
}

/** The columns of `table`'s staging file, in order. */
export function stagedColumns(table: TableName): string[] {
  return TABLES[table].columns.map(([name]) => name);
}

/** Throws unless `fields`, a staging file's first line, name the columns of `table` in order. */
export function checkStagedHeader(table: TableName, fields: readonly string[]): void {
  const expected = stagedColumns(table).join(',');
  if (fields.join(',') !== expected)
    throw new Error(`staged ${table} header is ${fields.join(',')}, not ${expected}`);
}

/**
 * A staged field as the embedded engine gives it back: empty is null for scalars, numbers and
 * booleans as such; lists and JSON stay the text the engine keeps them as (the mappers read that text).
 * A DOUBLE may also be in the exact form of the engine's exports (a point-read file keeps the lines
 * of edge/export as its edges).
 */
export function asLoaded(text: string, type: ColumnType): unknown {
  switch (type) {
    case 'STRING[]':
    case 'TEXT[]':
    case 'JSON':
      return text;
    case 'INT64':
      return text === '' ? null : Number(text);
    case 'DOUBLE':
      // The engine's exports write a DOUBLE exactly as `<m>p<s>` (exactNumber); staged text never so.
      return text === '' ? null : text.includes('p') ? exactNumber(text) : Number(text);
    case 'BOOLEAN':
      return text === '' ? null : text === 'true';
    default:
      return text === '' ? null : text;
  }
}

/**
 * The number `text` names as the embedded engine's exports write a DOUBLE exactly, `<m>p<s>`: the
 * integer m over 2^s (see cypher/edge/export.embedded.cypher). m has no more significant bits than
 * a double, so it converts exactly, and dividing by powers of two is exact down to the value itself
 * (in two steps: 2^s alone may be past a double's range).
 */
export function exactNumber(text: string): number {
  const p = text.indexOf('p');
  const s = Number(text.slice(p + 1));
  if (p <= 0 || !EXACT_SCALE.test(text.slice(p + 1)) || !EXACT_MANTISSA.test(text.slice(0, p)))
    throw new Error(`${text} is not a number as the engine's export writes it exactly`);
  const half = Math.trunc(s / 2);
  return Number(BigInt(text.slice(0, p))) / 2 ** (s - half) / 2 ** half;
}

/** As exactNumber, for the text `bytes[start, end)`. */
export function exactNumberOfBytes(bytes: Buffer, start: number, end: number): number {
  return exactNumber(bytes.toString('latin1', start, end));
}

const EXACT_MANTISSA = /^-?\d{1,19}$/;
const EXACT_SCALE = /^-?\d{1,4}$/;

/** Powers of ten a double holds exactly: the divisors of numberOfBytes. */
const EXACT_POWERS = Array.from({ length: 16 }, (_, k) => 10 ** k);

/**
 * A staged number (INT64 or DOUBLE) as `asLoaded` gives it (null: none), read from the bytes
 * `bytes[start, end)`. Decimals of at most 15 digits, the staging's own, are their digits as an
 * integer over a power of ten: both are exact in a double and IEEE division rounds correctly, so
 * the quotient is the double the text names, as `Number` would read it. Anything else is read by
 * `Number`.
 */
export function numberOfBytes(bytes: Buffer, start: number, end: number): number | null {
  if (start === end) return null;
  const negative = bytes[start] === 0x2d;
  let digits = 0;
  let decimals = -1;
  let m = 0;
  for (let p = negative ? start + 1 : start; p < end; p++) {
    const b = bytes[p]!;
    if (b === 0x2e && decimals < 0) decimals = 0;
    else if (b >= 48 && b <= 57 && digits < 15) {
      m = m * 10 + (b - 48);
      digits++;
      if (decimals >= 0) decimals++;
    } else return asLoaded(bytes.toString('utf8', start, end), 'DOUBLE') as number;
  }
  if (digits === 0) return asLoaded(bytes.toString('utf8', start, end), 'DOUBLE') as number;
  const v = decimals > 0 ? m / EXACT_POWERS[decimals]! : m;
  return negative ? -v : v;
}

/**
 * A decoder of staged rows of `table` whose fields are the columns `names`, in that order, into
 * properties as the embedded engine gives them back (asLoaded); throws for a name the table lacks.
 */
export function stagedRowDecoder(
  table: TableName,
  names: readonly string[],
): (fields: readonly string[]) => Props {
  const typeOf = new Map<string, ColumnType>(TABLES[table].columns);
  const types = names.map((name) => {
    const type = typeOf.get(name);
    if (type === undefined) throw new Error(`the ${table} table has no column ${name}`);
    return type;
  });
  return (fields) => {
    const row: Props = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = asLoaded(fields[i] ?? '', types[i]!);
    return row;
  };
}

/**
 * The point-read file (point-file.ts) of a staged import, written from its Company and Edge
 * staging files while the store loads them, so that it answers as one written from the loaded
 * graph does. The profiles are written as the stores write them, JSON.stringify of toProfile of
 * each row as the engine gives it back once loaded, but straight from each staged line's bytes
 * (StagedProfileWriter: the whole file took 7-9 s of CPU at 1M companies, against 16-17 s when
 * each row was decoded and mapped, on a core the load wanted). The Edge staging file itself is kept
 * as the file's edges (under a name of its own beside it, a second link to the staging file), found
 * by the keys of its lines the import noted as it wrote them (staged-keys.ts); a read decodes and
 * maps its one row (mapping every edge with its evidence took about 70 s of CPU at 1M; a read pays
 * about 10 microseconds). Keeping the Company lines so too saved the import another 16 s of CPU,
 * but cost every profile read 10 to 20 microseconds more in a server (about a tenth). A server
 * opens the file at its first read of the new data instead of reading every profile and edge back
 * from the engine, which at 1M companies took four to six minutes of a first start, beside the
 * requests, while they were read by ranges (about a minute since the engine writes them to files).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Identifier } from '../domain/model';
import type { Logger } from '../logger';
import { memoize } from '../memoize';
import type { LoadAlongside } from './graph-store';
import { byTypeThenValue, int, iso, jsonList, texts, toIdentifier } from './mappers';
import { fillPointFile } from './point-file';
import type { PointFileWriter } from './point-file';
import { LineEntries, keysFileOf, readStagedKeys } from './staged-keys';
import { hashOfBytes } from './string-hash';
import type { StagedKeys } from './staged-keys';
import {
  checkExportedBlock,
  checkStagedHeader,
  eachLineOf,
  fieldBounds,
  readStagingBlocks,
  refuseQuoted,
  stagedColumns,
  stagedHeader,
  stagedCounts,
} from './staging-file';
import { STAGING_DELIMITER, stagingFile } from './tables';
import type { TableName } from './tables';

/**
 * Writes the point-read file `file` under `key` from the staging directory: every company, and
 * with `edges` every edge with its evidence. Throws when the staging holds other counts than its
 * marker states, or `signal` aborts (nothing is left behind then).
 */
export async function writeStagedPointFile(
  stagingDir: string,
  file: string,
  key: string,
  edges: boolean,
  signal: AbortSignal,
): Promise<{ companies: number; edges: number }> {
  const counts = stagedCounts(stagingDir);
  const expected = { companies: counts.Company ?? 0, edges: edges ? (counts.Edge ?? 0) : 0 };
  await fillPointFile(file, key, expected, async (writer) => {
    await addStagedProfiles(
      writer,
      path.join(stagingDir, stagingFile('Company')),
      (header) => {
        checkStagedHeader('Company', header);
        return header;
      },
      () => signal.throwIfAborted(),
    );
    if (edges) {
      const staged = path.join(stagingDir, stagingFile('Edge'));
      const keys = await stagedKeysOf(staged, 'Edge', signal);
      signal.throwIfAborted();
      writer.addStagingFile('edges', stagedColumns('Edge'), staged, keys);
    }
    return true;
  });
  return expected;
}

/**
 * Adds to `writer` the profile of every line of `file`, a file of Company lines in the staging's
 * text whose first line names its columns: `columnsOf` checks that header and answers the columns
 * (every profile field among them, the vid first; see StagedProfileWriter). `afterBlock` runs after
 * each block of lines (it may throw to stop). A file the embedded engine wrote (company/export-profiles)
 * holds no byte 0x01 unless the engine quoted a value (one holding a tab or a line break, which no
 * staged value holds): such a file is refused, its lines no longer being one company each.
 */
export async function addStagedProfiles(
  writer: PointFileWriter,
  file: string,
  columnsOf: (header: string[]) => readonly string[],
  afterBlock?: () => void,
): Promise<void> {
  let profiles: StagedProfileWriter | null = null;
  await readStagingBlocks(
    file,
    (text) => {
      profiles = new StagedProfileWriter(columnsOf(text.split(STAGING_DELIMITER)));
    },
    (bytes, start, end) => {
      refuseQuoted(file, bytes, start, end);
      eachLineOf(bytes, start, end, (from, to) => {
        const profile = profiles!.write(bytes, from, to);
        if (profile) writer.addCompanyJson(profile.hash, profile.json, profile.length);
      });
    },
    afterBlock,
  );
  if (!profiles) throw new Error(`${file} holds no header`);
}

/**
 * The JSON of the profiles of staged Company lines, written from the lines' bytes: for each line,
 * the UTF-8 text of JSON.stringify(toProfile(row)) for the row stagedRowDecoder makes of it (tests
 * hold the two equal, byte for byte), without decoding the line or making the row or the profile.
 * Each value is mapped as asLoaded and toProfile map it: texts are copied with JSON's escapes, and
 * the addresses are the staged JSON as it is, which the staging writes in the form toAddress gives
 * (addressesField: its keys, in its order, each value a string or null). The few values that need
 * more (identifiers, which toProfile sorts; aliases, which are percent-encoded; dates) are decoded
 * and mapped by the mappers themselves, except identifiers already in the profile's form and order
 * (identifiersAsProfiled), copied as they are, and dates seen before, whose JSON is kept.
 */
export class StagedProfileWriter {
  private out = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Where each field of the line at hand begins, and one past its end (a tab or the line's end). */
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  private readonly order: number[];

  constructor(columns: readonly string[]) {
    this.from = new Int32Array(columns.length);
    this.to = new Int32Array(columns.length);
    this.order = PROFILE_FIELDS.map(([name]) => {
      const i = columns.indexOf(name);
      if (i < 0) throw new Error(`the staged Company lines have no column ${name}`);
      return i;
    });
    if (columns[0] !== 'vid') throw new Error(`staged Company lines begin with ${columns[0]}, not vid`);
  }

  /**
   * The JSON of the profile of the line `bytes[start, end)` (without its line feed), valid until the
   * next call: `json[0, length)`, and the fnv1a hash of its vid; null for a line without a vid.
   */
  write(bytes: Buffer, start: number, end: number): { json: Buffer; length: number; hash: number } | null {
    const { from, to } = this;
    fieldBounds(bytes, start, end, from, to);
    if (to[0] === from[0]) return null;
    // At most six bytes for each byte of the line (a control character as \u00XX), and the names.
    const need = 6 * (end - start) + 4096;
    if (this.out.length < need) this.out = Buffer.allocUnsafe(need * 2);
    this.used = 0;
    const order = this.order;
    for (let k = 0; k < PROFILE_FIELDS.length; k++) {
      const [, kind] = PROFILE_FIELDS[k]!;
      this.raw(NAMES[k]!);
      const i = order[k]!;
      this.value(kind, bytes, from[i]!, to[i]!);
    }
    this.out[this.used++] = 0x7d; // }
    return { json: this.out, length: this.used, hash: hashOfBytes(bytes, from[0]!, to[0]!) };
  }

  private value(kind: FieldKind, b: Buffer, a: number, z: number): void {
    switch (kind) {
      case 'key':
        return this.quoted(b, a, z);
      case 'text':
        return a === z ? this.raw(NULL) : this.quoted(b, a, z);
      case 'list':
        return this.list(b, a, z);
      case 'count':
        return a === z ? this.raw(ZERO) : this.countValue(b, a, z);
      case 'flag':
        return a === z ? this.raw(NULL) : this.raw(equals(b, a, z, TRUE) ? TRUE : FALSE);
      case 'parent':
        return this.raw(equals(b, a, z, TRUE) ? TRUE : FALSE);
      case 'date':
        return a === z ? this.raw(NULL) : this.text(this.dateJson(b.toString('utf8', a, z)));
      case 'identifiers':
        if (a === z || equals(b, a, z, EMPTY)) return this.raw(EMPTY);
        if (identifiersAsProfiled(b, a, z)) {
          this.used += b.copy(this.out, this.used, a, z);
          return;
        }
        return this.text(
          JSON.stringify(
            jsonList(b.toString('utf8', a, z))
              .map(toIdentifier)
              .sort(byTypeThenValue),
          ),
        );
      case 'addresses':
        if (a === z) return this.raw(EMPTY);
        this.used += b.copy(this.out, this.used, a, z);
        return;
      case 'aliases':
        return a === z || equals(b, a, z, EMPTY)
          ? this.raw(EMPTY)
          : this.text(JSON.stringify(texts(b.toString('utf8', a, z))));
    }
  }

  /** The JSON of a date text, as iso maps it, kept: a million companies' dates fall on far fewer days. */
  private readonly dateJson = memoize((text) => JSON.stringify(iso(text)), DATES_KEPT);

  /** Bytes as they are (short ones: names, literals). */
  private raw(bytes: Uint8Array): void {
    const out = this.out;
    let u = this.used;
    for (let i = 0; i < bytes.length; i++) out[u++] = bytes[i]!;
    this.used = u;
  }

  private text(s: string): void {
    this.used += this.out.write(s, this.used, 'utf8');
  }

  /** `b[a, z)` as a JSON string, escaped as JSON.stringify escapes (UTF-8 bytes past ASCII are copied). */
  private quoted(b: Buffer, a: number, z: number): void {
    const out = this.out;
    let u = this.used;
    out[u++] = QUOTE;
    for (let p = a; p < z; p++) {
      const c = b[p]!;
      if (c === QUOTE || c === BACKSLASH) {
        out[u++] = BACKSLASH;
        out[u++] = c;
      } else if (c < 0x20) {
        const short = SHORT_ESCAPES[c];
        out[u++] = BACKSLASH;
        if (short !== undefined) out[u++] = short;
        else {
          out[u++] = 0x75; // u
          out[u++] = 0x30;
          out[u++] = 0x30;
          out[u++] = HEX[c >> 4]!;
          out[u++] = HEX[c & 15]!;
        }
      } else out[u++] = c;
    }
    out[u++] = QUOTE;
    this.used = u;
  }

  /** A STRING[] value, the staged `[a,b]` (elements hold no comma or bracket): as strings() reads it. */
  private list(b: Buffer, a: number, z: number): void {
    if (z - a < 2 || b[a] !== 0x5b || b[z - 1] !== 0x5d) return this.raw(EMPTY);
    const out = this.out;
    out[this.used++] = 0x5b;
    if (z - a > 2) {
      let s = a + 1;
      for (let p = a + 1; p <= z - 1; p++) {
        if (p < z - 1 && b[p] !== COMMA) continue;
        if (s > a + 1) out[this.used++] = COMMA;
        this.quoted(b, s, p);
        s = p + 1;
      }
    }
    out[this.used++] = 0x5d;
  }

  /** An INT64 count as Number() reads it: its digits when they are plainly a number, else mapped. */
  private countValue(b: Buffer, a: number, z: number): void {
    let plain = z - a <= 15 && (b[a] !== 0x30 || z - a === 1);
    for (let p = a; plain && p < z; p++) plain = b[p]! >= 0x30 && b[p]! <= 0x39;
    if (!plain) return this.text(JSON.stringify(int(Number(b.toString('utf8', a, z)))));
    this.used += b.copy(this.out, this.used, a, z);
  }
}

/** Date texts whose JSON a StagedProfileWriter keeps; past them it starts afresh (memoize). */
const DATES_KEPT = 1 << 16;

const IDENTIFIER_TYPE = Buffer.from('{"type":"');
const IDENTIFIER_VALUE = Buffer.from('","value":"');

/**
 * Whether the staged identifiers b[a, z) are byte for byte the profile's: what
 * JSON.stringify(jsonList(text).map(toIdentifier).sort(byTypeThenValue)) gives for their text. So
 * when they are ASCII objects of a type and a value, in that order, nothing in them escaped, already
 * in byTypeThenValue's order (the staging orders them by its own rule). Most companies' are, and
 * copying them spares their parse, sort and print.
 */
function identifiersAsProfiled(b: Buffer, a: number, z: number): boolean {
  if (b[a] !== 0x5b || b[z - 1] !== 0x5d) return false; // [ ]
  let previous: Identifier | null = null;
  for (let p = a + 1; ;) {
    if (!equals(b, p, p + IDENTIFIER_TYPE.length, IDENTIFIER_TYPE)) return false;
    const type = p + IDENTIFIER_TYPE.length;
    const typeEnd = plainStringEnd(b, type, z);
    if (typeEnd < 0 || !equals(b, typeEnd, typeEnd + IDENTIFIER_VALUE.length, IDENTIFIER_VALUE)) return false;
    const value = typeEnd + IDENTIFIER_VALUE.length;
    const valueEnd = plainStringEnd(b, value, z);
    if (valueEnd < 0 || b[valueEnd + 1] !== 0x7d) return false; // }
    // One identifier is in order; more are compared as the sort compares them.
    const next = valueEnd + 2;
    if (previous !== null || b[next] === COMMA) {
      const current = {
        type: b.toString('latin1', type, typeEnd),
        value: b.toString('latin1', value, valueEnd),
      };
      if (previous !== null && byTypeThenValue(previous, current) > 0) return false;
      previous = current;
    }
    if (next === z - 1) return true;
    if (b[next] !== COMMA) return false;
    p = next + 1;
  }
}

/**
 * Where the JSON string whose text begins at p ends (its closing quote); -1 past z, or for a byte
 * that is not ASCII or that JSON.stringify would not print as it is.
 */
function plainStringEnd(b: Buffer, p: number, z: number): number {
  for (let q = p; q < z; q++) {
    const c = b[q]!;
    if (c === QUOTE) return q;
    if (c < 0x20 || c >= 0x80 || c === BACKSLASH) return -1;
  }
  return -1;
}

type FieldKind =
  'key' | 'text' | 'list' | 'count' | 'flag' | 'parent' | 'date' | 'identifiers' | 'addresses' | 'aliases';

/** The profile's fields in toProfile's order, and how each staged value is mapped. */
const PROFILE_FIELDS: readonly (readonly [string, FieldKind])[] = [
  ['vid', 'key'],
  ['cid_id', 'key'],
  ['name', 'key'],
  ['company_legal_name', 'text'],
  ['description', 'text'],
  ['domains', 'list'],
  ['websites', 'list'],
  ['count_supplier_evidence', 'count'],
  ['count_customer_evidence', 'count'],
  ['count_customers', 'count'],
  ['count_suppliers', 'count'],
  ['identifiers', 'identifiers'],
  ['addresses', 'addresses'],
  ['domiciled_country', 'text'],
  ['incorporated_country', 'text'],
  ['incorporation_date', 'date'],
  ['ipo_date', 'date'],
  ['is_active', 'flag'],
  ['is_freight_forwarder', 'flag'],
  ['is_public', 'flag'],
  ['hq_phone_number', 'text'],
  ['is_cluster_parent', 'parent'],
  ['aliases', 'aliases'],
  ['industry', 'text'],
  ['industry_code_system', 'text'],
  ['industry_code', 'text'],
];
/** What goes before each field's value: `{"vid":`, then `,"cid_id":`, and so on. */
const NAMES = PROFILE_FIELDS.map(([name], k) =>
  Buffer.from(`${k === 0 ? '{' : ','}${JSON.stringify(name)}:`),
);
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const ZERO = Buffer.from('0');
const EMPTY = Buffer.from('[]');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const HEX = Buffer.from('0123456789abcdef');
/** The escapes JSON.stringify writes short: \b \t \n \f \r. */
const SHORT_ESCAPES: (number | undefined)[] = [];
SHORT_ESCAPES[8] = 0x62;
SHORT_ESCAPES[9] = 0x74;
SHORT_ESCAPES[10] = 0x6e;
SHORT_ESCAPES[12] = 0x66;
SHORT_ESCAPES[13] = 0x72;

function equals(b: Buffer, a: number, z: number, literal: Uint8Array): boolean {
  if (z - a !== literal.length) return false;
  for (let i = 0; i < literal.length; i++) if (b[a + i] !== literal[i]) return false;
  return true;
}

/**
 * Adds to `writer` as its edges the lines of `exported`, a file the embedded engine wrote of every
 * edge (edge/export), kept as an import keeps its Edge staging file (addStagingFile: the writer
 * links it under a name of its own, and the caller may remove `exported` once the writer is done).
 * Its lines are in the staging's text but for each confidence, which the export writes exactly as
 * `<m>p<s>`, and a read gives back exactly (asLoaded). The keys of the lines are found by reading
 * them once. Refuses a file in which the engine quoted a value (see addStagedProfiles) or a line
 * without the header's fields. `expected`: the edges there are, when known (their keys are then
 * kept in arrays of that size from the start). `afterBlock` runs after each block of lines (it may
 * throw to stop).
 */
export async function addExportedEdges(
  writer: PointFileWriter,
  exported: string,
  expected?: number,
  afterBlock?: () => void,
): Promise<void> {
  const columns = stagedColumns('Edge');
  const entries = new LineEntries(expected);
  let at = 0;
  await readStagingBlocks(
    exported,
    (text) => {
      checkStagedHeader('Edge', text.split(STAGING_DELIMITER));
      at = Buffer.byteLength(text) + 1;
    },
    (bytes, start, end) => {
      checkExportedBlock(exported, bytes, start, end, columns.length);
      at = entries.addLines(bytes, start, end, at);
    },
    afterBlock,
  );
  if (at !== fs.statSync(exported).size) throw new Error(`${exported} changed while its lines were read`);
  const { count, hashes, offsets, lengths } = entries;
  writer.addStagingFile('edges', columns, exported, { count, hashes, offsets, lengths, bytes: at });
}

/**
 * The keys of the lines of `file`, a staging file of `table`, its header checked: those the import
 * saved beside it (the Edge lines'), or else found by reading its lines (the Company lines', about
 * a second at 1M companies, where writing each profile as JSON took 16 s).
 */
async function stagedKeysOf(file: string, table: TableName, signal: AbortSignal): Promise<StagedKeys> {
  const bytes = fs.statSync(file).size;
  const saved = readStagedKeys(keysFileOf(file), bytes);
  if (saved) {
    checkStagedHeader(table, stagedHeader(file));
    return saved;
  }
  const entries = new LineEntries();
  let at = 0;
  await readStagingBlocks(
    file,
    (text) => {
      checkStagedHeader(table, text.split(STAGING_DELIMITER));
      at = Buffer.byteLength(text) + 1;
    },
    (block, start, end) => {
      at = entries.addLines(block, start, end, at);
    },
    () => signal.throwIfAborted(),
  );
  if (at !== bytes) throw new Error(`staging file ${file} changed while its lines were read`);
  const { count, hashes, offsets, lengths } = entries;
  return { count, hashes, offsets, lengths, bytes };
}

/**
 * The point-read file written while the store loads an import (see writeStagedPointFile), as the
 * store names it (`name`) and keys it (`keyOf` the data's key).
 */
export function pointFileAlongside(
  name: string,
  keyOf: (dataKey: string) => string,
  edges: boolean,
  log?: Logger,
): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const started = Date.now();
    const { file, key } = derivedFile(name);
    const counts = await writeStagedPointFile(stagingDir, file, keyOf(key), edges, signal);
    log?.info({ ...counts, ms: Date.now() - started, file }, 'point-read file of the import written');
  };
}

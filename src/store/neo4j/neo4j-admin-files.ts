import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { neo4jTextList } from '../dialect';
import { readStagingLines, stagedCounts } from '../staging-file';
import { STAGING_DELIMITER, TABLES, stagingFile } from '../tables';
import type { ColumnType, TableName } from '../tables';
import { jsonArray } from './neo4j-import';

/**
 * Input files for Neo4j's offline bulk loader (`neo4j-admin database import full`),
 * written from a staging directory: the fast path for a first load of a large
 * dataset into an empty database. The graph they describe is the one the online
 * import (neo4j-import.ts) writes, node for node and property for property, with
 * two differences that no reader sees: nothing carries an `import_id` (a later
 * online import rewrites everything it keeps and prunes what lacks its id), and a
 * list with no elements is no property at all (the bulk loader cannot write an
 * empty list; the mappers read both as no elements).
 *
 * The files are tab-separated with no quoting, as the staging files are: staged
 * values hold no tab, line break or other control character, so the quote
 * character is set to U+0001 (never present) and list elements are separated by
 * U+001F. `import.args` holds the loader's options and file list, with paths
 * relative to the directory, for `neo4j-admin database import full <db> @import.args`
 * run from inside it.
 */

/** The loader's argument file, written beside the data files. */
export const ADMIN_ARGS_FILE = 'import.args';

/** The generation the files give the database's generation record: that of a first import. */
export const ADMIN_FILES_GENERATION = 1;

/** Separates list elements in the files (U+001F, never in a staged value). */
const ARRAY_DELIMITER = '\u001f';

/** A data file of the loader: what it holds and how many rows it has. */
export interface AdminFile {
  file: string;
  kind: 'nodes' | 'relationships';
  /** The label of its nodes or the type of its relationships. */
  name: string;
  rows: number;
}

export interface AdminFilesResult {
  files: AdminFile[];
  /** The lineage the files give the database's generation record (graph/bump-generation). */
  lineage: string;
}

/** The loader's header type of a staged column type (none: string). */
const HEADER_TYPE: Record<ColumnType, string> = {
  STRING: '',
  JSON: '',
  'STRING[]': ':string[]',
  'TEXT[]': ':string[]',
  TIMESTAMP: ':datetime',
  BOOLEAN: ':boolean',
  INT64: ':long',
  DOUBLE: ':double',
};

/** A staged value as the loader reads it: lists without brackets (TEXT[] elements decoded), the rest as staged. */
function adminValue(type: ColumnType, raw: string): string {
  if (type === 'STRING[]') {
    if (!raw.startsWith('[') || !raw.endsWith(']')) throw new Error(`not a staged list literal: ${raw}`);
    // Elements hold no commas (the staging contract), so the separators are swapped in place.
    return raw.slice(1, -1).replaceAll(',', ARRAY_DELIMITER);
  }
  if (type === 'TEXT[]') return raw === '[]' ? '' : neo4jTextList(raw).join(ARRAY_DELIMITER);
  return raw;
}

/** One output file, encoded straight into a buffer and written in large synchronous appends (the command is a batch job). */
class AdminFileWriter {
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  rows = 0;

  constructor(file: string, header: readonly string[]) {
    this.fd = fs.openSync(file, 'wx');
    this.append(header.join('\t'));
  }

  row(fields: readonly string[]): void {
    this.line(fields.join('\t'));
  }

  line(text: string): void {
    this.append(text);
    this.rows++;
  }

  private append(text: string): void {
    // At most three bytes of UTF-8 per UTF-16 unit, and the line feed.
    if (this.used + 3 * text.length + 1 > this.buf.length) {
      this.flush();
      if (3 * text.length + 1 > this.buf.length) {
        fs.writeSync(this.fd, `${text}\n`);
        return;
      }
    }
    this.used += this.buf.write(text, this.used);
    this.buf[this.used++] = 0x0a;
  }

  flush(): void {
    let at = 0;
    while (at < this.used) at += fs.writeSync(this.fd, this.buf, at, this.used - at);
    this.used = 0;
  }

  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
}

/**
 * Rewrites a staged line of `table` as the loader reads it, touching only its
 * list columns: the other fields are passed on as they are, unsplit, so an
 * edge's evidence (most of an import's bytes) is never copied field by field.
 */
function listRewriter(table: TableName): (line: string, n: number) => string {
  const spec = TABLES[table];
  const types: ColumnType[] = [
    ...(spec.kind === 'rel' ? (['STRING', 'STRING'] as const) : []),
    ...spec.columns.map(([, type]) => type),
  ];
  return (line, n) => {
    let out = '';
    let copied = 0;
    let start = 0;
    let field = 0;
    for (;;) {
      const tab = line.indexOf('\t', start);
      const end = tab < 0 ? line.length : tab;
      const type = types[field];
      if (type === 'STRING[]' || type === 'TEXT[]') {
        out += line.slice(copied, start) + adminValue(type, line.slice(start, end));
        copied = end;
      }
      field++;
      if (tab < 0) break;
      start = tab + 1;
    }
    if (field !== types.length)
      throw new Error(
        `staging file ${stagingFile(table)} line ${n}: ${field} fields, expected ${types.length}`,
      );
    return copied === 0 ? line : out + line.slice(copied);
  };
}

/** Columns of a staged table as loader headers; the key column of a node table becomes its id. */
function headerOf(table: TableName): string[] {
  const spec = TABLES[table];
  const props = spec.columns.map(([name, type]) => `${name}${HEADER_TYPE[type]}`);
  if (spec.kind === 'rel') return [`:START_ID(${spec.from})`, `:END_ID(${spec.to})`, ...props];
  return [`${spec.columns[0][0]}:ID(${spec.name})`, ...props.slice(1)];
}

/**
 * Writes the loader's input files for the staging directory `stagingDir` into
 * `outDir`, which must be missing or empty. `onProgress` hears the rows of each
 * staged table as they are read.
 */
export async function writeNeo4jAdminFiles(
  stagingDir: string,
  outDir: string,
  onProgress?: (table: string, done: number, total: number) => void,
  lineage: string = randomUUID(),
): Promise<AdminFilesResult> {
  const counts = stagedCounts(stagingDir);
  fs.mkdirSync(outDir, { recursive: true });
  if (fs.readdirSync(outDir).length > 0)
    throw new Error(`${outDir} is not empty: the bulk-load files need a directory of their own`);

  const files: AdminFile[] = [];
  const open = (name: string, kind: AdminFile['kind'], header: readonly string[]) => {
    const w = new AdminFileWriter(path.join(outDir, `${name}.tsv`), header);
    return { w, done: () => (w.close(), files.push({ file: `${name}.tsv`, kind, name, rows: w.rows })) };
  };
  const readLines = async (table: TableName, row: (line: string, n: number) => void): Promise<void> => {
    const total = counts[table] ?? 0;
    let rows = 0;
    onProgress?.(table, 0, total);
    await readStagingLines(
      path.join(stagingDir, stagingFile(table)),
      (line, n) => {
        if (n === 1) return;
        row(line, n);
        rows++;
      },
      () => onProgress?.(table, rows, Math.max(total, rows)),
    );
  };
  // Companies, with their identifiers and addresses as nodes of their own (as the
  // online upsert makes them): an identifier is one node however many companies
  // name it, keyed by its type and value; an address belongs to one company.
  const companies = open('Company', 'nodes', headerOf('Company'));
  const identifiers = open('Identifier', 'nodes', [':ID(Identifier)', 'type', 'value']);
  const addresses = open('Address', 'nodes', [
    'address_id:ID(Address)',
    'address_line',
    'city',
    'region',
    'postal_code',
    'country',
    'type',
  ]);
  const identifiedBy = open('IDENTIFIED_BY', 'relationships', [':START_ID(Company)', ':END_ID(Identifier)']);
  const locatedAt = open('LOCATED_AT', 'relationships', [':START_ID(Company)', ':END_ID(Address)']);
  const identifiersAt = TABLES.Company.columns.findIndex(([name]) => name === 'identifiers');
  const addressesAt = TABLES.Company.columns.findIndex(([name]) => name === 'addresses');
  const seenIdentifiers = new Set<string>();
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const rewriteCompany = listRewriter('Company');
  await readLines('Company', (line, n) => {
    companies.w.line(rewriteCompany(line, n));
    const fields = line.split(STAGING_DELIMITER);
    const vid = fields[0]!;
    for (const item of jsonItems(fields[identifiersAt]!)) {
      if (typeof item.type !== 'string' || typeof item.value !== 'string') continue;
      const key = JSON.stringify([item.type, item.value]);
      if (!seenIdentifiers.has(key)) {
        seenIdentifiers.add(key);
        identifiers.w.row([key, item.type, item.value]);
      }
      identifiedBy.w.row([vid, key]);
    }
    jsonItems(fields[addressesAt]!).forEach((a, n) => {
      const id = `${vid}#${n}`;
      addresses.w.row([
        id,
        text(a.address_line),
        text(a.city),
        text(a.region),
        text(a.postal_code),
        text(a.country),
        text(a.type),
      ]);
      locatedAt.w.row([vid, id]);
    });
  });
  for (const f of [companies, identifiers, addresses, identifiedBy, locatedAt]) f.done();

  for (const table of ['Edge', 'SUPPLIES', 'CLUSTER_SUPPLIES'] as const) {
    const out = open(table, TABLES[table].kind === 'rel' ? 'relationships' : 'nodes', headerOf(table));
    const rewrite = listRewriter(table);
    await readLines(table, (line, n) => out.w.line(rewrite(line, n)));
    out.done();
  }

  // The generation record an import through tiergraph leaves (graph/bump-generation),
  // under a lineage of its own (drawn for these files unless given), so that no server
  // takes files it derived from another database's data for this one's.
  const meta = open('TiergraphMeta', 'nodes', [
    'key:ID(TiergraphMeta)',
    'generation:long',
    'lineage',
    'changed_at:datetime',
  ]);
  meta.w.row(['graph', String(ADMIN_FILES_GENERATION), lineage, new Date().toISOString()]);
  meta.done();

  const args = [
    '--delimiter=TAB',
    '--array-delimiter=U+001F',
    '--quote=U+0001',
    ...files.map((f) => `--${f.kind}=${f.name}=${f.file}`),
  ];
  fs.writeFileSync(path.join(outDir, ADMIN_ARGS_FILE), args.join('\n') + '\n');
  return { files, lineage };
}

/** The objects of a staged JSON column; an empty field (null) has none. */
function jsonItems(raw: string): Record<string, unknown>[] {
  return jsonArray(raw === '' ? null : raw);
}

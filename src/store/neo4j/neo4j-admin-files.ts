import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { neo4jList, neo4jTextList } from '../dialect';
import { readStagingFile } from '../staging-file';
import { SUCCESS_MARKER, TABLES, stagingFile } from '../tables';
import type { ColumnType, TableName } from '../tables';
import { columnCount, jsonArray } from './neo4j-import';

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
  if (type === 'STRING[]') return raw === '[]' ? '' : neo4jList(raw).join(ARRAY_DELIMITER);
  if (type === 'TEXT[]') return raw === '[]' ? '' : neo4jTextList(raw).join(ARRAY_DELIMITER);
  return raw;
}

/** One output file, written in large synchronous appends (the command is a batch job). */
class AdminFileWriter {
  private readonly fd: number;
  private lines: string[] = [];
  rows = 0;

  constructor(
    readonly file: string,
    header: readonly string[],
  ) {
    this.fd = fs.openSync(file, 'wx');
    this.lines.push(header.join('\t'));
  }

  row(fields: readonly string[]): void {
    this.lines.push(fields.join('\t'));
    this.rows++;
    if (this.lines.length >= 4096) this.flush();
  }

  flush(): void {
    if (this.lines.length === 0) return;
    fs.writeSync(this.fd, this.lines.join('\n') + '\n');
    this.lines = [];
  }

  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
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
): Promise<AdminFilesResult> {
  const marker = path.join(stagingDir, SUCCESS_MARKER);
  if (!fs.existsSync(marker))
    throw new Error(`staging directory ${stagingDir} is incomplete (no ${SUCCESS_MARKER} marker)`);
  const counts = (
    JSON.parse(fs.readFileSync(marker, 'utf8')) as { counts?: Partial<Record<TableName, number>> }
  ).counts;
  fs.mkdirSync(outDir, { recursive: true });
  if (fs.readdirSync(outDir).length > 0)
    throw new Error(`${outDir} is not empty: the bulk-load files need a directory of their own`);

  const files: AdminFile[] = [];
  const open = (name: string, kind: AdminFile['kind'], header: readonly string[]) => {
    const w = new AdminFileWriter(path.join(outDir, `${name}.tsv`), header);
    return { w, done: () => (w.close(), files.push({ file: `${name}.tsv`, kind, name, rows: w.rows })) };
  };
  const read = async (table: TableName, row: (fields: string[]) => void): Promise<void> => {
    const total = counts?.[table] ?? 0;
    const width = columnCount(table);
    let n = 0;
    onProgress?.(table, 0, total);
    await readStagingFile(
      path.join(stagingDir, stagingFile(table)),
      (fields, line) => {
        if (line === 1) return;
        if (fields.length !== width)
          throw new Error(
            `staging file ${stagingFile(table)} line ${line}: ${fields.length} fields, expected ${width}`,
          );
        row(fields);
        n++;
      },
      () => onProgress?.(table, n, Math.max(total, n)),
    );
  };

  // Companies, with their identifiers and addresses as nodes of their own (as the
  // online upsert makes them): an identifier is one node however many companies
  // name it, keyed by its type and value; an address belongs to one company.
  const company = TABLES.Company.columns;
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
  const identifiersAt = company.findIndex(([name]) => name === 'identifiers');
  const addressesAt = company.findIndex(([name]) => name === 'addresses');
  const seenIdentifiers = new Set<string>();
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  await read('Company', (fields) => {
    companies.w.row(fields.map((raw, i) => adminValue(company[i]![1], raw)));
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

  const edge = TABLES.Edge.columns;
  const edges = open('Edge', 'nodes', headerOf('Edge'));
  await read('Edge', (fields) => edges.w.row(fields.map((raw, i) => adminValue(edge[i]![1], raw))));
  edges.done();

  for (const table of ['SUPPLIES', 'CLUSTER_SUPPLIES'] as const) {
    const columns = TABLES[table].columns;
    const rels = open(table, 'relationships', headerOf(table));
    await read(table, (fields) =>
      rels.w.row(fields.map((raw, i) => (i < 2 ? raw : adminValue(columns[i - 2]![1], raw)))),
    );
    rels.done();
  }

  // The generation record an import through tiergraph leaves (graph/bump-generation),
  // under a lineage of its own, so that no server takes files it derived from
  // another database's data for this one's.
  const lineage = randomUUID();
  const meta = open('TiergraphMeta', 'nodes', [
    'key:ID(TiergraphMeta)',
    'generation:long',
    'lineage',
    'changed_at:datetime',
  ]);
  meta.w.row(['graph', '1', lineage, new Date().toISOString()]);
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

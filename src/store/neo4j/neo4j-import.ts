import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { splitStatements } from '../cypher-files';
import { readStagingFile, stagedCounts } from '../staging-file';
import type { CypherQuery } from '../cypher-files';
import { LOAD_ORDER, TABLES, stagingFile } from '../tables';
import type { ColumnType, TableName } from '../tables';
import { neo4jList, neo4jTextList } from '../dialect';
import { integer, utcDateTime } from './driver';
import type { Neo4jExecutor } from './executor';

/** The upsert query of each staging table. */
export type UpsertQueries = Record<TableName, CypherQuery>;

export interface Neo4jImportOptions {
  /** Rows per transaction. */
  batchSize: number;
  /** Transactions in flight at once (default 1). */
  parallel?: number;
  /** Rows written so far of `table`, of `total` (from the staging marker). */
  onProgress?: (table: string, done: number, total: number) => void;
}

export interface Neo4jImportResult {
  importId: string;
  rows: Record<TableName, number>;
}

/**
 * One staged value as the driver should send it: empty fields are null (which
 * `SET +=` turns into "no property"), timestamps UTC datetimes, INT64 Neo4j
 * integers, lists of strings real lists (see LIST_PROPERTIES). JSON stays in its
 * staged text, as on the embedded engine.
 */
export function stagedValue(type: ColumnType, raw: string): unknown {
  if (raw === '') return null;
  switch (type) {
    case 'TIMESTAMP': {
      const d = new Date(raw);
      if (Number.isNaN(d.getTime())) throw new Error(`staged timestamp is not a date: ${raw}`);
      return utcDateTime(d);
    }
    case 'INT64':
      return integer(Number(raw));
    case 'DOUBLE':
      return Number(raw);
    case 'BOOLEAN':
      return raw === 'true';
    case 'STRING[]':
      return neo4jList(raw);
    case 'TEXT[]':
      return neo4jTextList(raw);
    default:
      return raw;
  }
}

type Parameters = Record<string, unknown>;

/** Fields per row of a table's staging file. */
function columnCount(table: TableName): number {
  const spec = TABLES[table];
  return spec.columns.length + (spec.kind === 'rel' ? 2 : 0);
}

/** Builds the upsert row of one staged record of `table` (fields in staging-file order). */
export function upsertRow(table: TableName, fields: readonly string[]): Parameters {
  const spec = TABLES[table];
  if (spec.kind === 'rel') {
    const props: Parameters = {};
    spec.columns.forEach(([name, type], i) => (props[name] = stagedValue(type, fields[i + 2] ?? '')));
    return { from: fields[0], to: fields[1], props };
  }
  const props: Parameters = {};
  spec.columns.forEach(([name, type], i) => (props[name] = stagedValue(type, fields[i] ?? '')));
  if (table !== 'Company') return props;
  const vid = props.vid as string;
  const identifiers = jsonArray(props.identifiers).map((i) => ({
    type: i.type ?? null,
    value: i.value ?? null,
  }));
  const addresses = jsonArray(props.addresses).map((a, n) => ({
    address_id: `${vid}#${n}`,
    address_line: a.address_line ?? null,
    city: a.city ?? null,
    region: a.region ?? null,
    postal_code: a.postal_code ?? null,
    country: a.country ?? null,
    type: a.type ?? null,
  }));
  return {
    vid,
    props,
    identifiers: identifiers.filter((i) => typeof i.type === 'string' && typeof i.value === 'string'),
    addresses,
  };
}

/** The objects of a staged JSON list (identifiers, addresses); none for a missing value. */
export function jsonArray(v: unknown): Record<string, unknown>[] {
  if (typeof v !== 'string') return [];
  const parsed: unknown = JSON.parse(v);
  return Array.isArray(parsed)
    ? parsed.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null)
    : [];
}

/**
 * Digest of the staged files: the import's id. The same files give the same id,
 * so a re-import writes every property with the value it already has and the
 * prune step finds nothing to remove.
 */
export async function stagingDigest(stagingDir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const table of LOAD_ORDER) {
    hash.update(`${table}\n`);
    for await (const chunk of createReadStream(path.join(stagingDir, stagingFile(table))))
      hash.update(chunk as Buffer);
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * Loads a staging directory into Neo4j with batched `UNWIND` upserts: companies,
 * then edges, then relationships, each batch one write transaction, up to
 * `parallel` of them at once; the next batch is parsed while they commit. Then removes everything the
 * import did not write (`prune`). Readers see the graph change table by table.
 */
export async function importIntoNeo4j(
  exec: Neo4jExecutor,
  upserts: UpsertQueries,
  pruneScript: string,
  stagingDir: string,
  opts: Neo4jImportOptions,
): Promise<Neo4jImportResult> {
  const counts = stagedCounts(stagingDir);
  const importId = await stagingDigest(stagingDir);
  const rows = { Company: 0, Edge: 0, SUPPLIES: 0, CLUSTER_SUPPLIES: 0 } satisfies Record<TableName, number>;
  const parallel = Math.max(1, opts.parallel ?? 1);

  for (const table of LOAD_ORDER) {
    const total = counts[table] ?? 0;
    let batch: Parameters[] = [];
    // Up to `parallel` transactions in flight while the next batch is parsed. Their
    // rows never overlap (every row is keyed), so the order of commits does not
    // matter; a deadlock between two of them is retried by the driver.
    const inFlight = new Set<Promise<void>>();
    let failure: { err: unknown } | null = null;
    // Read through a function: the type checker would take `failure` for null still,
    // not seeing the callbacks that set it.
    const failed = (): { err: unknown } | null => failure;
    const send = async (): Promise<void> => {
      const sending = batch;
      batch = [];
      while (inFlight.size >= parallel && !failed()) await Promise.race(inFlight);
      const f = failed();
      if (f) throw f.err;
      const done: Promise<void> = exec
        .write(upserts[table], { rows: sending, import_id: importId })
        .then(
          () => {
            rows[table] += sending.length;
            opts.onProgress?.(table, rows[table], Math.max(total, rows[table]));
          },
          // Held, not thrown here: the next send or the end of the table rethrows it.
          (err: unknown) => void (failure ??= { err }),
        )
        .finally(() => inFlight.delete(done));
      inFlight.add(done);
    };
    opts.onProgress?.(table, 0, total);
    const width = columnCount(table);
    try {
      await readStagingFile(
        path.join(stagingDir, stagingFile(table)),
        (fields, line) => {
          if (line === 1) return;
          if (fields.length !== width)
            throw new Error(
              `staging file ${stagingFile(table)} line ${line}: ${fields.length} fields, expected ${width}`,
            );
          batch.push(upsertRow(table, fields));
        },
        async () => {
          if (batch.length >= opts.batchSize) await send();
        },
      );
      if (batch.length > 0) await send();
    } finally {
      // Nothing of this table is still running when the import goes on or fails.
      await Promise.all(inFlight);
    }
    const f = failed();
    if (f) throw f.err;
  }

  for (const statement of splitStatements(pruneScript)) {
    await exec.autoCommit('import/prune', statement, { import_id: importId });
  }
  return { importId, rows };
}

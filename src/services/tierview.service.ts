import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import type { BlobStore } from '../blobs/blob-store';
import { CsvBytes, csvHeader } from '../domain/csv-text';
import { AppError } from '../domain/errors';
import {
  COMPANY_COLUMNS,
  RELATIONSHIP_COLUMNS,
  TIER_COLUMNS,
  TIERVIEW_COLUMNS,
  TierviewLines,
  companyRecord,
  rootOnlyRecord,
  tierviewRecord,
  walkDirection,
} from '../domain/tierview';
import type { CsvRecord, TierViewRequest } from '../domain/tierview';
import type { TierCompany, TierRelationship } from '../domain/tier-walk';
import type { GraphStore } from '../store/graph-store';

export interface ExportProgress {
  phase: 'companies' | 'relationships';
  /** The tier whose relationships are being written (relationships phase). */
  tier: number;
  tiers: number;
  companies: number;
  rows: number;
}

export interface ExportResult {
  /** Blob key of each file by its output key: `tierview_file`, or the three of a multi-table export. */
  files: Record<string, string>;
  companies: number;
  rows: number;
  bytes: number;
  /** Companies the per-tier cap left out, by tier (only tiers that lost some); empty without a cap. */
  dropped: Record<number, number>;
}

/**
 * What the run's final state says of a capped export: how many companies each
 * tier lost to `max_companies_per_tier`, so that nothing is left out silently.
 * Empty when nothing was left out.
 */
/**
 * The state_message of a run that made its files: empty, as the interface shows a success, unless
 * the files need a word: companies that max_companies_per_tier left out, or no relationship at all
 * (files of headers only, or the root's row alone, look like a failed download otherwise).
 */
export function successMessage(result: { rows: number; dropped: Record<number, number> }): string {
  if (result.rows === 0) return NO_RELATIONSHIPS;
  return droppedMessage(result.dropped);
}

/** What an export without a relationship row says in its final state. */
export const NO_RELATIONSHIPS =
  'no relationship matched the request (the root, tiers, dates and filters), so the files hold no relationship rows';

export function droppedMessage(dropped: Record<number, number>): string {
  const tiers = Object.keys(dropped)
    .map(Number)
    .sort((a, b) => a - b);
  if (tiers.length === 0) return '';
  const total = tiers.reduce((n, t) => n + dropped[t]!, 0);
  const parts = tiers.map((t) => `tier ${t}: ${dropped[t]}`).join(', ');
  return `max_companies_per_tier left out ${total} ${total === 1 ? 'company' : 'companies'} (${parts})`;
}

const UTF8_BOM = '\uFEFF';

/**
 * One CSV file being written: records are turned into CSV text and pushed into
 * the blob store as a stream, waiting whenever the store is behind, so a file
 * is never held whole in memory.
 */
class CsvFile {
  private readonly out = new PassThrough({ highWaterMark: 1 << 20 });
  private readonly columns: readonly string[];
  private readonly encoder: CsvBytes;
  readonly done: Promise<{ key: string; bytes: number }>;
  /** Rejects as soon as the store stops taking the file (a full disk budget, an I/O error). */
  private readonly failed: Promise<never>;
  rows = 0;

  constructor(blobs: BlobStore, key: string, columns: readonly string[], bom: boolean, owner: string | null) {
    this.columns = columns;
    // The byte order mark is asked for by those who open the file in Excel: its text is made safe there too.
    this.encoder = new CsvBytes(bom);
    this.done = blobs.put(key, this.out, 'text/csv; charset=utf-8', owner);
    // The writer may stop early; the rejection is awaited in finish() or abort().
    this.done.catch(() => undefined);
    this.failed = this.done.then(() => new Promise<never>(() => undefined));
    this.failed.catch(() => undefined);
    // Excel reads a CSV file as UTF-8 only when it starts with the byte order mark.
    this.out.write(`${bom ? UTF8_BOM : ''}${csvHeader(columns)}`);
  }

  /** Records as `csvRecord` writes them, encoded as bytes (see CsvBytes). */
  async write(records: CsvRecord[]): Promise<void> {
    for (const record of records) this.encoder.record(this.columns, record);
    await this.writeEncoded(this.encoder.take(), records.length);
  }

  /** `rows` records already encoded, as CSV text or its bytes (see TierviewLines). */
  async writeEncoded(chunk: string | Buffer, rows: number): Promise<void> {
    if (rows === 0) return;
    this.rows += rows;
    // A store that failed never drains: its error ends the wait instead.
    if (!this.out.write(chunk)) {
      await Promise.race([once(this.out, 'drain'), this.failed]);
    }
  }

  async finish(): Promise<{ key: string; bytes: number }> {
    this.out.end();
    return this.done;
  }

  abort(reason: unknown): void {
    this.out.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  }
}

/**
 * File names of one attempt at an export, under `runs/<run_id>/<attempt_id>/`, `runId` being the id
 * clients see (the names show in download links): two attempts at one run never write, rename or
 * delete each other's files.
 */
export function exportKeys(runId: number, attemptId: string, multiple: boolean): Record<string, string> {
  const dir = `runs/${runId}/${attemptId}`;
  return multiple
    ? {
        relationships_file: `${dir}/tierview-${runId}-relationships.csv`,
        tiers_file: `${dir}/tierview-${runId}-tiers.csv`,
        companies_file: `${dir}/tierview-${runId}-companies.csv`,
      }
    : { tierview_file: `${dir}/tierview-${runId}.csv` };
}

/** Builds tier-view exports: the walk runs in the store, rows stream into the blob store. */
export class TierViewService {
  constructor(
    private readonly store: GraphStore,
    private readonly blobs: BlobStore,
  ) {}

  /**
   * Walks the graph for `request` and writes the CSV file(s) of attempt
   * `attemptId` of the run clients know as `runId`, counted in the share of the
   * API key `owner` (the run's). Throws NOT_FOUND when the root is unknown, and
   * the signal's reason when it is aborted; the files of a failed export are
   * removed.
   */
  async export(
    runId: number,
    attemptId: string,
    request: TierViewRequest,
    onProgress: (p: ExportProgress) => void,
    signal?: AbortSignal,
    owner: string | null = null,
  ): Promise<ExportResult> {
    const keys = exportKeys(runId, attemptId, request.output_multiple_tables);
    const files = new Map<string, CsvFile>();
    const bom = request.csv_bom === true;
    const file = (key: string, columns: readonly string[]) =>
      new CsvFile(this.blobs, key, columns, bom, owner);
    if (request.output_multiple_tables) {
      files.set('relationships_file', file(keys.relationships_file!, RELATIONSHIP_COLUMNS));
      files.set('tiers_file', file(keys.tiers_file!, TIER_COLUMNS));
      files.set('companies_file', file(keys.companies_file!, COMPANY_COLUMNS));
    } else {
      files.set('tierview_file', file(keys.tierview_file!, TIERVIEW_COLUMNS));
    }
    const main = files.get('tierview_file') ?? files.get('relationships_file')!;
    const tiersFile = files.get('tiers_file');
    const companiesFile = files.get('companies_file');

    let root: TierCompany | null = null;
    let lines: TierviewLines | null = null;
    let companies = 0;
    const dropped: Record<number, number> = {};
    const progress: ExportProgress = {
      phase: 'companies',
      tier: 0,
      tiers: request.num_tiers,
      companies: 0,
      rows: 0,
    };
    const report = () => onProgress({ ...progress });
    report();

    try {
      const found = await this.store.walkTiers(
        {
          root: request.root_nodes,
          direction: walkDirection(request.direction),
          tiers: request.num_tiers,
          evidenceFrom: request.min_evid_date,
          minConfidence: request.min_confidence ?? null,
          countries: request.countries ?? null,
          maxCompaniesPerTier: request.max_companies_per_tier ?? null,
          // Only the companies file of a three-table export shows them.
          companyDetails: request.output_multiple_tables,
        },
        {
          companies: async (batch: TierCompany[]) => {
            signal?.throwIfAborted();
            root ??= batch[0] ?? null;
            companies += batch.length;
            progress.companies = companies;
            if (tiersFile) await tiersFile.write(batch.map((c) => ({ vid: c.vid, tier: c.tier })));
            if (companiesFile) await companiesFile.write(batch.map(companyRecord));
            report();
          },
          relationships: async (tier: number, batch: TierRelationship[]) => {
            signal?.throwIfAborted();
            const r = root!;
            if (request.output_multiple_tables) {
              await main.write(batch.map((rel) => relationshipRecord(r, rel)));
            } else {
              lines ??= new TierviewLines(r, bom);
              await main.writeEncoded(lines.rows(batch), batch.length);
            }
            progress.phase = 'relationships';
            progress.tier = tier + 1;
            progress.rows = main.rows;
            report();
          },
          dropped: (tier: number, count: number) => {
            dropped[tier] = count;
          },
        },
        signal,
      );
      if (!found) throw new AppError('NOT_FOUND', `No company with id '${request.root_nodes}'.`);
      signal?.throwIfAborted();
      const rows = main.rows;
      if (rows === 0 && root && !request.output_multiple_tables) await main.write([rootOnlyRecord(root)]);
      let bytes = 0;
      for (const f of files.values()) bytes += (await f.finish()).bytes;
      return { files: keys, companies, rows, bytes, dropped };
    } catch (e) {
      for (const f of files.values()) f.abort(e);
      await Promise.all([...files.values()].map((f) => f.done.catch(() => undefined)));
      await Promise.all(Object.values(keys).map((k) => this.blobs.delete(k).catch(() => undefined)));
      throw e;
    }
  }
}

function relationshipRecord(root: TierCompany, rel: TierRelationship): CsvRecord {
  const full = tierviewRecord(root, rel);
  const out: CsvRecord = {};
  for (const c of RELATIONSHIP_COLUMNS) out[c] = full[c] ?? null;
  return out;
}

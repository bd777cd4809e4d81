/**
 * Writes the Company, SUPPLIES and Edge rows once the derive step is done, in
 * the columns of the staging contract (src/store/tables.ts).
 */
import { STAGING_DELIMITER, TABLES } from '../../store/tables';
import type { TableName } from '../../store/tables';
import { TextBuffer } from '../csv';
import type { ChunkWriter } from '../csv';
import type { CompanySink } from '../stage-result';
import { bucketStart } from '../evidence-buckets';
import type { EvidenceSink } from '../evidence-buckets';
import { addressesField } from './addresses';
import type { Derived } from './derive';
import { typesField } from './evidence';
import { identifiersField } from './identifiers';
import { BATCH, PROGRESS_EVERY } from './state';
import type { StageState } from './state';
import { iso, num, numberText } from './values';

/**
 * The columns this module writes, per table, in order. Checked against the
 * staging contract before anything is written, so a change there fails loudly
 * instead of shifting values into the wrong columns.
 */
const WRITTEN_COLUMNS: Record<TableName, string> = {
  Company:
    'vid,cid_id,name,company_legal_name,description,domains,websites,domiciled_country,incorporated_country,incorporation_date,ipo_date,is_active,is_public,is_freight_forwarder,hq_phone_number,is_cluster_parent,cluster_parent_vid,cluster_size,count_suppliers,count_customers,count_supplier_evidence,count_customer_evidence,identifiers,addresses,aliases,industry,industry_code_system,industry_code',
  Edge: 'edge_id,supplier_id,customer_id,label,status_code,latest_edge_date,latest_finalized_edge_date,last_modified_on,confidence_score,hs_codes,evidences',
  SUPPLIES: 'from,to,edge_id,confidence_score,latest_edge_date,status_code,evidence_types,hs_codes',
  CLUSTER_SUPPLIES: 'from,to,relationship_id,edge_ids,confidence_score,latest_edge_date,evidence_types',
};

/** The columns of a staging file, in order. */
function fileColumns(table: TableName): string[] {
  const spec = TABLES[table];
  const cols = spec.columns.map((c) => c[0]);
  return spec.kind === 'rel' ? ['from', 'to', ...cols] : cols;
}

export function header(table: TableName): string {
  return `${fileColumns(table).join(STAGING_DELIMITER)}\n`;
}

/** Throws when the staging contract's columns are no longer WRITTEN_COLUMNS. */
export function checkWrittenColumns(): void {
  for (const t of Object.keys(TABLES) as TableName[]) {
    const h = fileColumns(t).join(',');
    if (h !== WRITTEN_COLUMNS[t]) {
      throw new Error(
        `staging contract changed for ${t}: expected columns ${WRITTEN_COLUMNS[t]}, contract has ${h}`,
      );
    }
  }
}

/** Writes the Company rows, then the SUPPLIES rows with their Edge rows, and flushes every staging file. */
export async function writeTables(state: StageState, d: Derived): Promise<void> {
  const n = d.n;
  const nc = state.vids.size;
  const cw = state.writer('Company');
  for (let i = 0; i < nc; i += BATCH) {
    writeCompanies(state, d, i, Math.min(nc, i + BATCH), cw);
    if (cw.full) await cw.flush();
    if (i % PROGRESS_EVERY < BATCH)
      state.progress({ phase: 'write', file: 'Company', rows: i, totalRowsHint: nc });
  }
  state.counts.Company = nc;

  const sw = state.writer('SUPPLIES');
  const sink = state.evidence as EvidenceSink;
  await sink.startEdges(state.writer('Edge'));
  state.writers.delete('Edge');
  let reported = 0;
  const nb = state.nBuckets;
  const prefixes = new TextBuffer();
  for (let b = 0; b < nb; b++) {
    const lo = bucketStart(b, nb, n);
    const hi = bucketStart(b + 1, nb, n);
    for (let e = lo; e < hi; e += BATCH) {
      writeEdges(state, d, e, Math.min(hi, e + BATCH), prefixes);
      if (sw.full) await sw.flush();
      if (e - reported >= PROGRESS_EVERY) {
        reported = e;
        state.progress({ phase: 'write', file: 'Edge', rows: e, totalRowsHint: n });
      }
    }
    await sink.writeEdges(b, lo, hi, prefixes.take());
  }
  await sink.finish();
  state.counts.Edge = n;
  state.counts.SUPPLIES = n;
  state.progress({ phase: 'write', file: 'Edge', rows: n, totalRowsHint: n });
  await state.flushAll(true);
}

/**
 * Hands every Company row to a CompanySink with its count columns empty, a few megabytes at a time,
 * while the staging reads its other files: once the addresses are read, the counts are the only
 * columns still to come. Each piece waits for the promise the sink returns for the one before (a
 * sink with enough waiting says so), unless hurried: every file is read, and the staging waits.
 */
export class CompanyFeed {
  /** Settles once every row is handed over, or the feed stopped. */
  readonly done: Promise<void>;
  private hurried = false;
  private stopped = false;
  private wake: (() => void) | null = null;

  constructor(
    state: StageState,
    private readonly sink: CompanySink,
  ) {
    this.done = this.run(state, sink);
    // Seen by whoever awaits `done`; a staging that failed first does not.
    this.done.catch(() => undefined);
  }

  /** Every input file is read: the sink hears so, and the rest goes at once, without waiting for it. */
  hurry(): void {
    this.sink.readAll?.();
    this.hurried = true;
    this.wake?.();
  }

  /** No more rows are handed over (the staging failed). */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private async run(state: StageState, sink: CompanySink): Promise<void> {
    const nc = state.vids.size;
    const out = new TextBuffer(FEED_BYTES + (FEED_BYTES >> 2));
    for (let i = 0; i < nc && !this.stopped; i += BATCH) {
      writeCompanies(state, null, i, Math.min(nc, i + BATCH), out);
      if (out.size < FEED_BYTES && i + BATCH < nc) continue;
      const taken = sink.lines(out.take());
      if (taken && !this.hurried) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          taken.then(resolve, resolve);
        });
        this.wake = null;
      } else {
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (!this.stopped) sink.allLines?.();
  }
}

/** Bytes of Company rows handed to a CompanySink at a time. */
const FEED_BYTES = 4 << 20;

/** Writes the Company rows of companies [from, to), their count columns empty without `d`. */
function writeCompanies(
  state: StageState,
  d: Derived | null,
  from: number,
  to: number,
  out: Pick<ChunkWriter, 'write' | 'writeBytes'>,
): void {
  const clusterOf = state.clusterOf;
  const clusterSize = state.clusterSize;
  const clusterParent = state.clusterParent;
  const realClusters = state.realClusters;
  for (let i = from; i < to; i++) {
    const k = clusterOf[i] as number;
    out.write(`${state.vids.key(i)}\t${state.clusterCid[k] as string}\t`);
    state.companyMid.writeTo(out, i);
    const counts = d
      ? `${d.countSup[i] as number}\t${d.countCus[i] as number}\t${d.evSup[i] as number}\t${d.evCus[i] as number}`
      : '\t\t\t';
    out.write(
      `\t${k < realClusters && clusterParent[k] === i}\t${state.vids.key(clusterParent[k] as number)}\t${clusterSize[k] as number}\t${counts}\t${identifiersField(state, i)}\t${addressesField(state, i)}\t`,
    );
    state.companyTail.writeTo(out, i);
    out.write('\n');
  }
}

/**
 * Writes the SUPPLIES rows of edges [from, to) and collects their Edge rows up
 * to the evidence, which the Edge row sink completes.
 */
function writeEdges(state: StageState, d: Derived, from: number, to: number, prefixes: TextBuffer): void {
  const E = state.edges;
  const { sup, cus, latest, latestFin } = d;
  const sw = state.writer('SUPPLIES');
  for (let e = from; e < to; e++) {
    const id = state.edgeIds.key(e);
    const s = state.vids.key(sup[e] as number);
    const c = state.vids.key(cus[e] as number);
    const label = state.labels.key(E.label[e] as number);
    const status = num(E.status[e] as number);
    const ld = iso(latest[e] as number);
    const lf = iso(latestFin[e] as number);
    const lm = iso(E.lastMod[e] as number);
    const conf = numberText(E.conf[e] as number);
    const hs = E.hs[e] as string;
    const types = typesField(state, E.evTypes[e] as number, state.extraTypes.get(e));
    prefixes.write(`${id}\t${s}\t${c}\t${label}\t${status}\t${ld}\t${lf}\t${lm}\t${conf}\t${hs}\n`);
    sw.write(`${s}\t${c}\t${id}\t${conf}\t${ld}\t${status}\t${types}\t${hs}\n`);
  }
}

/**
 * Validate, derive, stage: reads an import directory (docs/import-format.md),
 * rejects bad rows with their physical line numbers, computes the derived
 * fields (cluster membership, counts, per-edge evidence summaries, cluster
 * edges) and writes one staging file per table of the staging contract
 * (src/store/tables.ts). A `_SUCCESS` marker is written last; a directory
 * without it is incomplete. Evidence reaches its Edge row through temporary
 * bucket files (evidence-buckets.ts).
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STAGING_DELIMITER, TABLES, encodeList, stagedText, stagingFile } from '../store/tables';
import type { TableName } from '../store/tables';
import { ByteStore, ChunkWriter, CsvFatalError, TextBuffer, readCsvFile } from './csv';
import type { CsvSink, ReadProgress } from './csv';
import {
  DATE_RANGE,
  DEFAULT_LABEL,
  DateParser,
  INPUT_FILES,
  OLD_DATE_RANGE,
  ValueError,
  checkCountry,
  checkHsCode,
  checkId,
  checkIdentifierValue,
  checkName,
  checkPhone,
  checkText,
  checkToken,
  checkUrl,
  excerpt,
  isId,
  isoOf,
  normBoolean,
  normDomain,
  normIdentifierType,
  normInteger,
  memoize,
  normList,
  normWebsite,
  checkListElement,
  parseConfidence,
  urlHost,
} from './format';
import type { InputFile, InputFileName } from './format';
import {
  bucketCount,
  bucketFile,
  bucketStart,
  evidenceRecord,
  evidenceWorkerAvailable,
  jsonString,
  jsonText,
  openEvidenceSink,
} from './evidence-buckets';
import type { EvidenceSink } from './evidence-buckets';
import { AsciiIndex, StringIndex, fingerprint } from './string-index';

/** Progress of an import or of dataset generation. */
export interface ImportProgress {
  phase: string;
  file?: string;
  rows: number;
  totalRowsHint?: number;
}

/** A row that was not loaded, and why. `line` is the physical line in `file` (header = 1). */
export interface RejectedRow {
  file: string;
  line: number;
  reason: string;
}

/** Items staged inside JSON columns rather than as rows of their own. */
export interface StagedItems {
  /** Evidence items, on their Edge rows. */
  evidence: number;
  /** Identifiers, on their Company rows. */
  identifiers: number;
  /** Addresses, on their Company rows. */
  addresses: number;
}

export interface StageResult {
  /** Rows written per staging table. */
  counts: Record<TableName, number>;
  /** Identifiers, addresses and evidence items written inside those rows. */
  items: StagedItems;
  /** Rejected rows, in file read order, then line order. */
  rejected: RejectedRow[];
  /** Data rows read per input file (header excluded), by file name. */
  inputRows: Record<string, number>;
}

export interface StageOptions {
  /** Most rejected rows tolerated; one more aborts the import. Default 1000; 0 allows none. */
  maxRejected?: number;
  /** Called at most about every 50,000 rows. */
  onProgress?: (p: ImportProgress) => void;
  /**
   * Turn evidence into JSON and write the Edge rows in a worker thread.
   * Default: for 50,000 relationships or more when the compiled worker script
   * is present. The staging files are the same either way.
   */
  evidenceWorker?: boolean;
}

/** The import stopped: a file or column is missing or malformed, or too many rows were rejected. */
export class ImportAbortedError extends Error {
  constructor(
    message: string,
    readonly rejected: RejectedRow[],
  ) {
    super(message);
    this.name = 'ImportAbortedError';
  }
}

/** Name of the marker file written into a staging directory once it is complete. */
export const SUCCESS_MARKER = '_SUCCESS';

export const DEFAULT_MAX_REJECTED = 1000;

const PROGRESS_EVERY = 50000;
/** Fewest relationships for which the evidence worker thread pays off. */
const EVIDENCE_WORKER_FROM = 50000;
/** Separates the fields of an address in memory; validated values never hold control characters. */
const ADDRESS_SEP = '\u0000';
/** Any control character, or the replacement character left by invalid UTF-8. */
// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const CTL_RE = /[\x00-\x1f\x7f-\x9f\ufffd]/;
/** Control characters not even free text may hold (tab and line breaks become spaces there). */
// eslint-disable-next-line no-control-regex -- finding control characters is the purpose
const HARD_CTL_RE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]/;
const SOFT_CTL_RE = /[\t\r\n]+/g;

const FILE_RANK: Record<string, number> = {};
Object.values(INPUT_FILES).forEach((f, i) => (FILE_RANK[f.file] = i));

/** Growable Int32Array. */
class IntList {
  a: Int32Array;
  n = 0;
  constructor(cap = 1024) {
    this.a = new Int32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  get(i: number): number {
    return this.a[i] as number;
  }
  set(i: number, v: number): void {
    this.a[i] = v;
  }
}

function growF64(a: Float64Array, cap: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(cap);
  b.set(a);
  return b;
}

function growI32(a: Int32Array, cap: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(cap);
  b.set(a);
  return b;
}

/** Column-wise storage of the accepted relationships and their evidence summaries. */
class EdgeStore {
  n = 0;
  private cap = 0;
  sup = new Int32Array(0);
  cus = new Int32Array(0);
  label = new Int32Array(0);
  line = new Int32Array(0);
  evCount = new Int32Array(0);
  evTypes = new Int32Array(0);
  conf = new Float64Array(0);
  status = new Float64Array(0);
  latest = new Float64Array(0);
  latestFin = new Float64Array(0);
  lastMod = new Float64Array(0);
  evMax = new Float64Array(0);
  evMaxFin = new Float64Array(0);
  hs: string[] = [];

  /** Makes room for one more edge; returns its number. */
  next(): number {
    if (this.n === this.cap) {
      const cap = Math.max(4096, this.cap * 2);
      this.sup = growI32(this.sup, cap);
      this.cus = growI32(this.cus, cap);
      this.label = growI32(this.label, cap);
      this.line = growI32(this.line, cap);
      this.evCount = growI32(this.evCount, cap);
      this.evTypes = growI32(this.evTypes, cap);
      this.conf = growF64(this.conf, cap);
      this.status = growF64(this.status, cap);
      this.latest = growF64(this.latest, cap);
      this.latestFin = growF64(this.latestFin, cap);
      this.lastMod = growF64(this.lastMod, cap);
      this.evMax = growF64(this.evMax, cap);
      this.evMaxFin = growF64(this.evMaxFin, cap);
      this.cap = cap;
    }
    return this.n++;
  }
}

/** Arrays the derive step computes once and its writers share. */
interface DeriveState {
  n: number;
  sup: Int32Array;
  cus: Int32Array;
  latest: Float64Array;
  latestFin: Float64Array;
  /** Cluster number of each edge's supplier and customer. */
  ca: Int32Array;
  cb: Int32Array;
  /** Cross-cluster edges ordered by (ca, cb). */
  byCluster: Int32Array;
  countSup: Int32Array;
  countCus: Int32Array;
  evSup: Float64Array;
  evCus: Float64Array;
}

/** Rows written between two awaits of the writers in the derive step. */
const BATCH = 4096;

interface ClusterRows {
  no: number;
  cid: string;
  members: number[];
  lines: number[];
  parentLines: number[];
  parent: number;
  rejectedParentLine: number;
}

/** A row handler for one input file, built once the header is known. */
interface RowHandler {
  /** Column being checked, for the rejection reason; empty for row-level rules. */
  at: string;
  row(f: string[], line: number): void;
  /** Called when a row is rejected, with the key it declared if it got that far. */
  onReject?(line: number): void;
  /** Called when a row is rejected before row() saw it (field count, control characters). */
  onRejectRaw?(f: string[], line: number): void;
}

/** Returns the trimmed value of field i (empty when the column is absent). */
function val(f: string[], i: number): string {
  const s = f[i];
  if (s === undefined) return '';
  if (s.length > 0 && (s.charCodeAt(0) === 32 || s.charCodeAt(s.length - 1) === 32)) return s.trim();
  return s;
}

function need(f: string[], i: number): string {
  const s = val(f, i);
  if (s.length === 0) throw new ValueError('missing value');
  return s;
}

/**
 * The columns this module writes, per table, in order. Checked against the
 * staging contract before anything is written, so a change there fails loudly
 * instead of shifting values into the wrong columns.
 */
const WRITTEN_COLUMNS: Record<TableName, string> = {
  Company:
    'vid,cid_id,name,company_legal_name,description,domains,websites,domiciled_country,incorporated_country,incorporation_date,ipo_date,is_active,is_public,is_freight_forwarder,hq_phone_number,is_cluster_parent,cluster_parent_vid,cluster_size,count_suppliers,count_customers,count_supplier_evidence,count_customer_evidence,identifiers,addresses',
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

function header(table: TableName): string {
  return `${fileColumns(table).join(STAGING_DELIMITER)}\n`;
}

function num(v: number): string {
  return Number.isNaN(v) ? '' : String(v);
}

function iso(ms: number): string {
  return Number.isNaN(ms) ? '' : isoOf(ms);
}

/** A staged list field: the list literal. */
function listField(items: readonly string[]): string {
  return encodeList(items);
}

const EMPTY_LIST = '[]';

/** The whole import run: state shared by the file handlers and the derive step. */
class Stager {
  readonly rejected: RejectedRow[] = [];
  readonly inputRows: Record<string, number> = {};
  readonly counts = {} as Record<TableName, number>;
  readonly items: StagedItems = { evidence: 0, identifiers: 0, addresses: 0 };
  private readonly writers = new Map<TableName, ChunkWriter>();
  /** Takes the evidence items, then writes the Edge rows with them (see evidence-buckets.ts). */
  private evidence: EvidenceSink | null = null;
  private nBuckets = 0;
  private readonly dates = new DateParser();
  // Values that repeat across millions of rows are checked once each.
  private readonly country = memoize(checkCountry);
  private readonly token = memoize(checkToken);
  private readonly integer = memoize(normInteger);
  private readonly domain = memoize(normDomain);
  /** Evidence types end up in lists (evidence_types). */
  private readonly evidenceType = memoize((v) => checkListElement(checkToken(v)));

  // companies
  private readonly vids = new StringIndex(1 << 16);
  private readonly companyLine = new IntList();
  private readonly companyMid = new ByteStore();
  private readonly rejectedCompanies = new Map<string, number>();
  // clusters
  private memberOf = new Int32Array(0);
  private clusterOf = new Int32Array(0);
  private clusterCid: string[] = [];
  private clusterParent = new Int32Array(0);
  private clusterSize = new Int32Array(0);
  /** Clusters named in clusters.csv come first; the rest are companies on their own. */
  private realClusters = 0;
  // identifiers, addresses
  /** Distinct `type:value` keys, so that an identifier shared by companies is kept once. */
  private readonly identifierKeys = new StringIndex(1 << 16);
  /** Per company, a linked list of its identifiers (key number, line): duplicate checks, then its JSON. */
  private identifierHead = new Int32Array(0);
  private readonly identifierNext = new IntList();
  private readonly identifierKeyNo = new IntList();
  private readonly identifierLine = new IntList();
  /** Per company, a linked list of its addresses in file order; their values live in `addresses`. */
  private addressHead = new Int32Array(0);
  private addressTail = new Int32Array(0);
  private readonly addressNext = new IntList();
  private readonly addresses = new ByteStore();
  // relationships, evidence
  private readonly edgeIds = new AsciiIndex(1 << 16);
  private readonly edges = new EdgeStore();
  private readonly rejectedEdges = new Map<string, number>();
  private readonly labels = new StringIndex();
  /**
   * Evidence ids are checked for duplicates by sorting 52-bit fingerprints once
   * the file is read; only when two fingerprints match is the file read again
   * with every id kept (exact mode), which is what gives line numbers.
   */
  private evidenceExact = false;
  private evidenceIds = new StringIndex();
  private evidenceLine = new IntList();
  private evidenceFp = new Float64Array(1 << 16);
  private evidenceFpCount = 0;
  private readonly typeBits = new StringIndex();
  private readonly extraTypes = new Map<number, Set<string>>();

  constructor(
    private readonly inputDir: string,
    private readonly stagingDir: string,
    private readonly maxRejected: number,
    private readonly onProgress: ((p: ImportProgress) => void) | undefined,
    private readonly evidenceWorker: boolean | undefined,
  ) {
    for (const t of Object.keys(TABLES) as TableName[]) this.counts[t] = 0;
  }

  async run(): Promise<StageResult> {
    for (const t of Object.keys(TABLES) as TableName[]) {
      const h = fileColumns(t).join(',');
      if (h !== WRITTEN_COLUMNS[t]) {
        throw new Error(
          `staging contract changed for ${t}: expected columns ${WRITTEN_COLUMNS[t]}, contract has ${h}`,
        );
      }
    }
    await mkdir(this.stagingDir, { recursive: true });
    await rm(join(this.stagingDir, SUCCESS_MARKER), { force: true });
    try {
      for (const t of Object.keys(TABLES) as TableName[]) {
        const w = await ChunkWriter.create(join(this.stagingDir, stagingFile(t)));
        this.writers.set(t, w);
        w.write(header(t));
      }
      await this.readFile('companies', (ix) => this.companyHandler(ix));
      this.memberOf = new Int32Array(this.vids.size).fill(-1);
      const clusters: ClusterRows[] = [];
      await this.readFile('clusters', (ix) => this.clusterHandler(ix, clusters));
      this.finishClusters(clusters);
      this.identifierHead = new Int32Array(this.vids.size).fill(-1);
      this.addressHead = new Int32Array(this.vids.size).fill(-1);
      this.addressTail = new Int32Array(this.vids.size).fill(-1);
      await this.readFile('identifiers', (ix) => this.identifierHandler(ix));
      await this.readFile('addresses', (ix) => this.addressHandler(ix));
      await this.readFile('relationships', (ix) => this.relationshipHandler(ix));
      this.nBuckets = bucketCount(this.edges.n);
      this.evidence = await openEvidenceSink(
        this.stagingDir,
        this.nBuckets,
        this.edges.n,
        this.evidenceWorker ?? (this.edges.n >= EVIDENCE_WORKER_FROM && evidenceWorkerAvailable()),
      );
      await this.readFile('evidence', (ix) => this.evidenceHandler(ix));
      if (this.duplicateFingerprints()) {
        await this.resetEvidence();
        this.evidenceExact = true;
        await this.readFile('evidence', (ix) => this.evidenceHandler(ix));
      }
      await this.evidence.seal();
      await this.derive();
      for (const w of this.writers.values()) await w.close();
    } catch (e) {
      await this.evidence?.abort().catch(() => undefined);
      for (const w of this.writers.values()) await w.abandon().catch(() => undefined);
      await Promise.all(
        (Object.keys(TABLES) as TableName[]).map((t) =>
          rm(join(this.stagingDir, stagingFile(t)), { force: true }),
        ),
      );
      await this.removeBuckets();
      if (e instanceof CsvFatalError) throw new ImportAbortedError(e.message, this.sortedRejected());
      throw e;
    }
    await this.removeBuckets();
    const result: StageResult = {
      counts: this.counts,
      items: this.items,
      rejected: this.sortedRejected(),
      inputRows: this.inputRows,
    };
    await writeFile(
      join(this.stagingDir, SUCCESS_MARKER),
      `${JSON.stringify({ counts: result.counts, items: result.items, inputRows: result.inputRows, rejected: result.rejected.length })}\n`,
    );
    return result;
  }

  private async removeBuckets(): Promise<void> {
    const all: Promise<void>[] = [];
    for (let b = 0; b < this.nBuckets; b++)
      all.push(rm(join(this.stagingDir, bucketFile(b)), { force: true }));
    await Promise.all(all);
  }

  private sortedRejected(): RejectedRow[] {
    return [...this.rejected].sort(
      (a, b) => (FILE_RANK[a.file] ?? 99) - (FILE_RANK[b.file] ?? 99) || a.line - b.line,
    );
  }

  private w(t: TableName): ChunkWriter {
    return this.writers.get(t) as ChunkWriter;
  }

  private async flushAll(force = false): Promise<void> {
    for (const w of this.writers.values()) if (force || w.full) await w.flush(force);
    await this.evidence?.flush();
  }

  private reject(file: string, line: number, reason: string): void {
    this.rejected.push({ file, line, reason });
    if (this.rejected.length > this.maxRejected) {
      throw new ImportAbortedError(
        `import aborted: more than ${this.maxRejected} rejected rows (last: ${file} line ${line}: ${reason})`,
        this.sortedRejected(),
      );
    }
  }

  private progress(p: ImportProgress): void {
    this.onProgress?.(p);
  }

  /**
   * Reads one input file: checks the header, then hands each well-formed row to
   * the handler and turns its ValueErrors into rejections.
   */
  private async readFile(
    name: InputFileName,
    makeHandler: (ix: (col: string) => number) => RowHandler,
  ): Promise<void> {
    const spec: InputFile = INPUT_FILES[name];
    const path = join(this.inputDir, spec.file);
    const exists = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!exists) {
      if (spec.required)
        throw new ImportAbortedError(`required file ${spec.file} is missing`, this.sortedRejected());
      return;
    }
    const file = spec.file;
    let rows = 0;
    let handler: RowHandler | null = null;
    let ncols = 0;
    let freeText: boolean[] = [];
    let names: string[] = [];
    const fatal = (msg: string): never => {
      throw new ImportAbortedError(`${file}: ${msg}`, this.sortedRejected());
    };
    const sink: CsvSink = {
      row: (f, line, suspect) => {
        if (handler === null) {
          names = f.map((h) => h.trim());
          ncols = names.length;
          const known = new Set(spec.columns.map((c) => c.name));
          const seen = new Set<string>();
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
        rows++;
        const h: RowHandler = handler;
        if (f.length !== ncols) {
          h.onRejectRaw?.(f, line);
          this.reject(file, line, `expected ${ncols} fields, found ${f.length}`);
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
            this.reject(file, line, `column "${names[k] ?? ''}": ${what}`);
            return;
          }
        }
        h.at = '';
        try {
          h.row(f, line);
        } catch (e) {
          if (!(e instanceof ValueError)) throw e;
          h.onReject?.(line);
          this.reject(file, line, h.at === '' ? e.message : `column "${h.at}": ${e.message}`);
        }
      },
      error: (line, reason) => {
        if (handler === null) fatal(`header row is not valid CSV: ${reason}`);
        rows++;
        this.reject(file, line, `malformed CSV: ${reason}`);
      },
    };
    let reported = 0;
    this.progress({ phase: 'read', file, rows: 0 });
    await readCsvFile(path, sink, async (p: ReadProgress) => {
      await this.flushAll();
      if (rows - reported >= PROGRESS_EVERY) {
        reported = rows;
        const hint = p.bytesRead > 0 ? Math.round((rows * p.totalBytes) / p.bytesRead) : undefined;
        this.progress({ phase: 'read', file, rows, totalRowsHint: hint });
      }
    });
    if (handler === null) fatal('the file is empty (no header row)');
    this.inputRows[file] = rows;
    this.progress({ phase: 'read', file, rows, totalRowsHint: rows });
  }

  /** Index of a company a row refers to, or a ValueError naming why it cannot be used. */
  private company(vid: string): number {
    const i = this.vids.get(vid);
    if (i >= 0) return i;
    const line = this.rejectedCompanies.get(vid);
    if (line !== undefined)
      throw new ValueError(`company "${vid}" was rejected (companies.csv line ${line})`);
    throw new ValueError(`unknown company ${excerpt(vid)}`);
  }

  private companyHandler(ix: (c: string) => number): RowHandler {
    const cVid = ix('vid');
    const cName = ix('name');
    const cLegal = ix('company_legal_name');
    const cDesc = ix('description');
    const cDomains = ix('domains');
    const cWebsites = ix('websites');
    const cDom = ix('domiciled_country');
    const cInc = ix('incorporated_country');
    const cIncDate = ix('incorporation_date');
    const cIpo = ix('ipo_date');
    const cActive = ix('is_active');
    const cPublic = ix('is_public');
    const cFf = ix('is_freight_forwarder');
    const cPhone = ix('hq_phone_number');
    let vid = '';
    const h: RowHandler = {
      at: '',
      row: (f, line) => {
        vid = '';
        h.at = 'vid';
        const v = checkId(need(f, cVid));
        const first = this.vids.get(v);
        if (first >= 0) {
          h.at = '';
          throw new ValueError(`duplicate vid "${v}" (first at line ${this.companyLine.get(first)})`);
        }
        vid = v;
        h.at = 'name';
        const name = checkName(need(f, cName));
        h.at = 'company_legal_name';
        const legal = checkName(val(f, cLegal));
        h.at = 'description';
        const desc = checkText(val(f, cDesc));
        h.at = 'domains';
        let s = val(f, cDomains);
        const domains = s === '' ? EMPTY_LIST : listField(normList(s, normDomain));
        h.at = 'websites';
        s = val(f, cWebsites);
        const websites = s === '' ? EMPTY_LIST : listField(normList(s, normWebsite));
        h.at = 'domiciled_country';
        s = val(f, cDom);
        const dom = s === '' ? '' : this.country(s);
        h.at = 'incorporated_country';
        s = val(f, cInc);
        const inc = s === '' ? '' : this.country(s);
        h.at = 'incorporation_date';
        s = val(f, cIncDate);
        const incDate = s === '' ? '' : isoOf(this.dates.parse(s, OLD_DATE_RANGE));
        h.at = 'ipo_date';
        s = val(f, cIpo);
        const ipo = s === '' ? '' : isoOf(this.dates.parse(s, DATE_RANGE));
        h.at = 'is_active';
        s = val(f, cActive);
        const active = s === '' ? '' : normBoolean(s);
        h.at = 'is_public';
        s = val(f, cPublic);
        const pub = s === '' ? '' : normBoolean(s);
        h.at = 'is_freight_forwarder';
        s = val(f, cFf);
        const ff = s === '' ? '' : normBoolean(s);
        h.at = 'hq_phone_number';
        s = val(f, cPhone);
        const phone = s === '' ? '' : checkPhone(s);
        h.at = '';
        this.vids.commit(v);
        this.companyLine.push(line);
        this.companyMid.push(
          `${stagedText(name)}\t${stagedText(legal)}\t${stagedText(desc)}\t${domains}\t${websites}\t${dom}\t${inc}\t${incDate}\t${ipo}\t${active}\t${pub}\t${ff}\t${stagedText(phone)}`,
        );
      },
      onReject: (line) => {
        if (vid !== '' && !this.rejectedCompanies.has(vid)) this.rejectedCompanies.set(vid, line);
      },
      onRejectRaw: (f, line) => {
        const v = val(f, cVid);
        if (isId(v) && this.vids.get(v) < 0 && !this.rejectedCompanies.has(v))
          this.rejectedCompanies.set(v, line);
      },
    };
    return h;
  }

  private clusterHandler(ix: (c: string) => number, clusters: ClusterRows[]): RowHandler {
    const cCid = ix('cid_id');
    const cVid = ix('vid');
    const cParent = ix('is_parent');
    const byCid = new Map<string, ClusterRows>();
    const memberLine = new Map<number, number>();
    let cluster: ClusterRows | null = null;
    let isParent = false;
    const h: RowHandler = {
      at: '',
      row: (f, line) => {
        cluster = null;
        isParent = false;
        h.at = 'cid_id';
        const cid = checkId(need(f, cCid));
        let c = byCid.get(cid);
        if (c === undefined) {
          c = {
            no: clusters.length,
            cid,
            members: [],
            lines: [],
            parentLines: [],
            parent: -1,
            rejectedParentLine: 0,
          };
          byCid.set(cid, c);
          clusters.push(c);
        }
        cluster = c;
        h.at = 'is_parent';
        isParent = normBoolean(need(f, cParent)) === 'true';
        h.at = 'vid';
        const vid = checkId(need(f, cVid));
        const ci = this.company(vid);
        const prev = this.memberOf[ci] as number;
        if (prev >= 0) {
          h.at = '';
          const other = clusters[prev] as ClusterRows;
          throw new ValueError(
            `company "${vid}" is already in cluster "${other.cid}" (line ${memberLine.get(ci) ?? 0})`,
          );
        }
        this.memberOf[ci] = c.no;
        memberLine.set(ci, line);
        c.members.push(ci);
        c.lines.push(line);
        if (isParent) {
          c.parentLines.push(line);
          c.parent = ci;
        }
      },
      onReject: (line) => {
        if (cluster !== null && isParent && cluster.rejectedParentLine === 0)
          cluster.rejectedParentLine = line;
      },
    };
    return h;
  }

  /** Drops clusters without exactly one parent, then numbers every cluster, singletons included. */
  private finishClusters(clusters: ClusterRows[]): void {
    const n = this.vids.size;
    this.clusterOf = new Int32Array(n).fill(-1);
    const cids: string[] = [];
    const parents: number[] = [];
    const sizes: number[] = [];
    for (const c of clusters) {
      let problem = '';
      if (c.parentLines.length === 0) {
        problem =
          c.rejectedParentLine > 0
            ? `cluster "${c.cid}" has no parent: its parent row (line ${c.rejectedParentLine}) was rejected`
            : `cluster "${c.cid}" has no parent row`;
      } else if (c.parentLines.length > 1) {
        problem = `cluster "${c.cid}" has ${c.parentLines.length} parent rows (lines ${c.parentLines.join(', ')})`;
      } else {
        const same = this.vids.get(c.cid);
        if (same >= 0 && !c.members.includes(same)) {
          problem = `cid_id "${c.cid}" is the vid of a company outside the cluster`;
        }
      }
      if (problem !== '') {
        for (let k = 0; k < c.members.length; k++) {
          this.memberOf[c.members[k] as number] = -1;
          this.reject(INPUT_FILES.clusters.file, c.lines[k] as number, problem);
        }
        continue;
      }
      const idx = cids.length;
      cids.push(c.cid);
      parents.push(c.parent);
      sizes.push(c.members.length);
      for (const m of c.members) this.clusterOf[m] = idx;
    }
    this.realClusters = cids.length;
    for (let i = 0; i < n; i++) {
      if (this.clusterOf[i] !== -1) continue;
      this.clusterOf[i] = cids.length;
      cids.push(this.vids.key(i));
      parents.push(i);
      sizes.push(1);
    }
    this.clusterCid = cids;
    this.clusterParent = Int32Array.from(parents);
    this.clusterSize = Int32Array.from(sizes);
  }

  private identifierHandler(ix: (c: string) => number): RowHandler {
    const cVid = ix('vid');
    const cType = ix('type');
    const cValue = ix('value');
    const h: RowHandler = {
      at: '',
      row: (f, line) => {
        h.at = 'vid';
        const vid = checkId(need(f, cVid));
        const ci = this.company(vid);
        h.at = 'type';
        const type = normIdentifierType(need(f, cType));
        h.at = 'value';
        const value = checkIdentifierValue(type, need(f, cValue));
        h.at = '';
        const key = `${type}:${value}`;
        let keyNo = this.identifierKeys.get(key);
        if (keyNo >= 0) {
          for (let p = this.identifierHead[ci] as number; p >= 0; p = this.identifierNext.get(p)) {
            if (this.identifierKeyNo.get(p) === keyNo) {
              throw new ValueError(
                `duplicate identifier ${key} for "${vid}" (first at line ${this.identifierLine.get(p)})`,
              );
            }
          }
        } else {
          keyNo = this.identifierKeys.commit(key);
        }
        this.identifierNext.push(this.identifierHead[ci] as number);
        this.identifierHead[ci] = this.identifierKeyNo.n;
        this.identifierKeyNo.push(keyNo);
        this.identifierLine.push(line);
        this.items.identifiers++;
      },
    };
    return h;
  }

  private addressHandler(ix: (c: string) => number): RowHandler {
    const cVid = ix('vid');
    const cLine = ix('address_line');
    const cCity = ix('city');
    const cRegion = ix('region');
    const cPostal = ix('postal_code');
    const cCountry = ix('country');
    const cType = ix('type');
    const h: RowHandler = {
      at: '',
      row: (f) => {
        h.at = 'vid';
        const vid = checkId(need(f, cVid));
        const ci = this.company(vid);
        h.at = 'address_line';
        const line = checkText(val(f, cLine));
        h.at = 'city';
        const city = checkName(val(f, cCity));
        h.at = 'region';
        const region = checkName(val(f, cRegion));
        h.at = 'postal_code';
        const postal = checkName(val(f, cPostal));
        h.at = 'country';
        let s = val(f, cCountry);
        const country = s === '' ? '' : this.country(s);
        h.at = 'type';
        s = val(f, cType);
        const type = s === '' ? '' : this.token(s);
        h.at = '';
        if (line === '' && city === '' && region === '' && postal === '' && country === '') {
          throw new ValueError('address has no values');
        }
        const S = ADDRESS_SEP;
        const a = this.addresses.push(
          `${line}${S}${city}${S}${region}${S}${postal}${S}${country}${S}${type}`,
        );
        this.addressNext.push(-1);
        const tail = this.addressTail[ci] as number;
        if (tail < 0) this.addressHead[ci] = a;
        else this.addressNext.set(tail, a);
        this.addressTail[ci] = a;
        this.items.addresses++;
      },
    };
    return h;
  }

  private relationshipHandler(ix: (c: string) => number): RowHandler {
    const cId = ix('edge_id');
    const cSup = ix('supplier_id');
    const cCus = ix('customer_id');
    const cConf = ix('confidence_score');
    const cLabel = ix('label');
    const cStatus = ix('status_code');
    const cLatest = ix('latest_edge_date');
    const cLatestFin = ix('latest_finalized_edge_date');
    const cLastMod = ix('last_modified_on');
    const cHs = ix('hs_codes');
    const E = this.edges;
    const dates = this.dates;
    const defaultLabel = this.labels.add(DEFAULT_LABEL);
    let edgeId = '';
    let lastSupVid = '';
    let lastSup = -1;
    const h: RowHandler = {
      at: '',
      row: (f, line) => {
        edgeId = '';
        h.at = 'edge_id';
        const id = checkId(need(f, cId));
        const first = this.edgeIds.get(id);
        if (first >= 0) {
          h.at = '';
          throw new ValueError(`duplicate edge_id "${id}" (first at line ${E.line[first]})`);
        }
        edgeId = id;
        h.at = 'supplier_id';
        const supVid = need(f, cSup);
        // Files are often grouped by supplier: skip the lookup when it repeats.
        let sup = lastSup;
        if (supVid !== lastSupVid) {
          sup = this.company(checkId(supVid));
          lastSupVid = supVid;
          lastSup = sup;
        }
        h.at = 'customer_id';
        const cus = this.company(checkId(need(f, cCus)));
        if (sup === cus) {
          h.at = '';
          throw new ValueError('supplier_id equals customer_id (self-relationship)');
        }
        h.at = 'confidence_score';
        const conf = parseConfidence(need(f, cConf));
        h.at = 'label';
        let s = val(f, cLabel);
        const label = s === '' ? defaultLabel : this.labels.add(this.token(s));
        h.at = 'status_code';
        s = val(f, cStatus);
        const status = s === '' ? NaN : Number(this.integer(s));
        h.at = 'latest_edge_date';
        s = val(f, cLatest);
        const latest = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = 'latest_finalized_edge_date';
        s = val(f, cLatestFin);
        const latestFin = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = 'last_modified_on';
        s = val(f, cLastMod);
        const lastMod = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = 'hs_codes';
        s = val(f, cHs);
        const hs = s === '' ? EMPTY_LIST : listField(normList(s, checkHsCode));
        h.at = '';
        this.edgeIds.commit(id);
        const e = E.next();
        E.sup[e] = sup;
        E.cus[e] = cus;
        E.conf[e] = conf;
        E.label[e] = label;
        E.status[e] = status;
        E.latest[e] = latest;
        E.latestFin[e] = latestFin;
        E.lastMod[e] = lastMod;
        E.evMax[e] = NaN;
        E.evMaxFin[e] = NaN;
        E.line[e] = line;
        E.hs.push(hs);
      },
      onReject: (line) => {
        if (edgeId !== '' && !this.rejectedEdges.has(edgeId)) this.rejectedEdges.set(edgeId, line);
      },
      onRejectRaw: (f, line) => {
        const id = val(f, cId);
        if (isId(id) && this.edgeIds.get(id) < 0 && !this.rejectedEdges.has(id))
          this.rejectedEdges.set(id, line);
      },
    };
    return h;
  }

  private evidenceHandler(ix: (c: string) => number): RowHandler {
    const cId = ix('id');
    const cEdge = ix('edge_id');
    const cDate = ix('date');
    const cType = ix('type');
    const cUrl = ix('url');
    const cDomain = ix('domain');
    const cStatus = ix('status_id');
    const cByCustomer = ix('provided_by_customer');
    const cMeta = ix('metadata');
    const cFin = ix('finalised_on');
    const cCreated = ix('created_on');
    const cMod = ix('last_modified_on');
    const E = this.edges;
    const dates = this.dates;
    const sink = this.evidence as EvidenceSink;
    const items = this.items;
    let lastEdgeId = '';
    let lastEdge = -1;
    const exact = this.evidenceExact;
    const h: RowHandler = {
      at: '',
      row: (f, line) => {
        h.at = 'id';
        const id = checkId(need(f, cId));
        if (exact) {
          const first = this.evidenceIds.get(id);
          if (first >= 0) {
            h.at = '';
            throw new ValueError(
              `duplicate evidence id "${id}" (first at line ${this.evidenceLine.get(first)})`,
            );
          }
        }
        h.at = 'edge_id';
        const edgeId = need(f, cEdge);
        // Evidence usually comes grouped by edge: skip the lookup when it repeats.
        let e = lastEdge;
        if (edgeId !== lastEdgeId) {
          checkId(edgeId);
          e = this.edgeIds.get(edgeId);
          if (e < 0) {
            const rl = this.rejectedEdges.get(edgeId);
            if (rl !== undefined)
              throw new ValueError(`edge "${edgeId}" was rejected (relationships.csv line ${rl})`);
            throw new ValueError(`unknown edge ${excerpt(edgeId)}`);
          }
          lastEdgeId = edgeId;
          lastEdge = e;
        }
        h.at = 'date';
        const date = dates.parse(need(f, cDate), DATE_RANGE);
        h.at = 'type';
        const type = val(f, cType);
        if (type !== '') this.evidenceType(type);
        h.at = 'url';
        const url = val(f, cUrl);
        if (url !== '') checkUrl(url);
        h.at = 'domain';
        let s = val(f, cDomain);
        const domain = s !== '' ? this.domain(s) : url !== '' ? urlHost(url) : '';
        h.at = 'status_id';
        s = val(f, cStatus);
        const status = s === '' ? '' : this.integer(s);
        h.at = 'provided_by_customer';
        s = val(f, cByCustomer);
        const byCustomer = s === '' ? '' : normBoolean(s);
        h.at = 'metadata';
        const meta = checkText(val(f, cMeta));
        h.at = 'finalised_on';
        s = val(f, cFin);
        const fin = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = 'created_on';
        s = val(f, cCreated);
        const created = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = 'last_modified_on';
        s = val(f, cMod);
        const mod = s === '' ? NaN : dates.parse(s, DATE_RANGE);
        h.at = '';
        if (exact) {
          this.evidenceIds.commit(id);
          this.evidenceLine.push(line);
        } else {
          if (this.evidenceFpCount === this.evidenceFp.length) {
            const b = new Float64Array(this.evidenceFp.length * 2);
            b.set(this.evidenceFp);
            this.evidenceFp = b;
          }
          this.evidenceFp[this.evidenceFpCount++] = fingerprint(id);
        }
        sink.add(
          evidenceRecord(
            e,
            isoOf(date),
            id,
            type,
            url,
            domain,
            status,
            byCustomer,
            meta,
            iso(fin),
            iso(created),
            iso(mod),
          ),
        );
        items.evidence++;
        E.evCount[e] = (E.evCount[e] as number) + 1;
        if (!(date <= (E.evMax[e] as number))) E.evMax[e] = date;
        if (!Number.isNaN(fin) && !(fin <= (E.evMaxFin[e] as number))) E.evMaxFin[e] = fin;
        if (type !== '') this.addType(e, type);
      },
    };
    return h;
  }

  /** Whether two evidence ids of the fast pass may be equal. */
  private duplicateFingerprints(): boolean {
    const fp = this.evidenceFp.subarray(0, this.evidenceFpCount).sort();
    for (let i = 1; i < fp.length; i++) if (fp[i] === fp[i - 1]) return true;
    return false;
  }

  /** Forgets everything the evidence file contributed, for a second, exact pass. */
  private async resetEvidence(): Promise<void> {
    await this.evidence?.reset();
    this.items.evidence = 0;
    const E = this.edges;
    E.evCount.fill(0);
    E.evTypes.fill(0);
    E.evMax.fill(NaN);
    E.evMaxFin.fill(NaN);
    this.extraTypes.clear();
    const file = INPUT_FILES.evidence.file;
    for (let i = this.rejected.length - 1; i >= 0; i--)
      if (this.rejected[i]?.file === file) this.rejected.splice(i, 1);
    this.evidenceFp = new Float64Array(0);
    this.evidenceFpCount = 0;
  }

  private addType(e: number, type: string): void {
    const bit = this.typeBits.add(type);
    if (bit < 30) {
      this.edges.evTypes[e] = (this.edges.evTypes[e] as number) | (1 << bit);
      return;
    }
    let set = this.extraTypes.get(e);
    if (set === undefined) {
      set = new Set();
      this.extraTypes.set(e, set);
    }
    set.add(type);
  }

  private readonly typesCache = new Map<number, string>();

  /** Evidence types (a bit set plus rare extras), sorted, as a staging list field. */
  private typesField(mask: number, extra: Set<string> | undefined): string {
    let text = extra === undefined ? this.typesCache.get(mask) : undefined;
    if (text !== undefined) return text;
    const names = new Set<string>(extra);
    for (let b = 0; b < 30; b++) if ((mask & (1 << b)) !== 0) names.add(this.typeBits.key(b));
    text = listField([...names].sort());
    if (extra === undefined) this.typesCache.set(mask, text);
    return text;
  }

  /** Counting sort of the edge numbers in `order` by key[e] in [0, nKeys); stable. */
  private static sortBy(order: Int32Array, key: Int32Array, nKeys: number): Int32Array {
    const start = new Int32Array(nKeys + 1);
    for (let i = 0; i < order.length; i++) {
      const k = (key[order[i] as number] as number) + 1;
      start[k] = (start[k] as number) + 1;
    }
    for (let k = 0; k < nKeys; k++) start[k + 1] = (start[k + 1] as number) + (start[k] as number);
    const out = new Int32Array(order.length);
    for (let i = 0; i < order.length; i++) {
      const e = order[i] as number;
      const k = key[e] as number;
      const at = start[k] as number;
      out[at] = e;
      start[k] = at + 1;
    }
    return out;
  }

  /** Writes cluster edges from position i of d.byCluster until about `budget` edges are covered; returns the next position. */
  private writeClusterEdges(d: DeriveState, i: number, budget: number): number {
    const E = this.edges;
    const { byCluster, ca, cb, latest } = d;
    const cs = this.w('CLUSTER_SUPPLIES');
    const stop = Math.min(byCluster.length, i + budget);
    while (i < stop) {
      const first = byCluster[i] as number;
      const a = ca[first] as number;
      const b = cb[first] as number;
      let j = i;
      const ids: string[] = [];
      let conf = 0;
      let date = NaN;
      let mask = 0;
      let extra: Set<string> | undefined;
      while (j < byCluster.length && ca[byCluster[j] as number] === a && cb[byCluster[j] as number] === b) {
        const e = byCluster[j] as number;
        ids.push(this.edgeIds.key(e));
        if ((E.conf[e] as number) > conf) conf = E.conf[e] as number;
        const dt = latest[e] as number;
        if (dt > date || (Number.isNaN(date) && !Number.isNaN(dt))) date = dt;
        mask |= E.evTypes[e] as number;
        const x = this.extraTypes.get(e);
        if (x !== undefined) extra = new Set([...(extra ?? []), ...x]);
        j++;
      }
      if (ids.length > 1) ids.sort();
      const cidA = this.clusterCid[a] as string;
      const cidB = this.clusterCid[b] as string;
      cs.write(
        `${this.vids.key(this.clusterParent[a] as number)}\t${this.vids.key(this.clusterParent[b] as number)}\t${cidA}~${cidB}\t${listField(ids)}\t${conf}\t${iso(date)}\t${this.typesField(mask, extra)}\n`,
      );
      this.counts.CLUSTER_SUPPLIES++;
      i = j;
    }
    return i;
  }

  /** Writes the Company rows of companies [from, to). */
  private writeCompanies(d: DeriveState, from: number, to: number): void {
    const cw = this.w('Company');
    const { countSup, countCus, evSup, evCus } = d;
    const clusterOf = this.clusterOf;
    const clusterSize = this.clusterSize;
    const clusterParent = this.clusterParent;
    const realClusters = this.realClusters;
    for (let i = from; i < to; i++) {
      const k = clusterOf[i] as number;
      cw.write(`${this.vids.key(i)}\t${this.clusterCid[k] as string}\t`);
      this.companyMid.writeTo(cw, i);
      cw.write(
        `\t${k < realClusters && clusterParent[k] === i}\t${this.vids.key(clusterParent[k] as number)}\t${clusterSize[k] as number}\t${countSup[i] as number}\t${countCus[i] as number}\t${evSup[i] as number}\t${evCus[i] as number}\t${this.identifiersField(i)}\t${this.addressesField(i)}\n`,
      );
    }
  }

  /** The identifiers of company i as a staged JSON field, sorted by type, then value. */
  private identifiersField(i: number): string {
    let p = this.identifierHead[i] as number;
    if (p < 0) return EMPTY_LIST;
    const keys: string[] = [];
    for (; p >= 0; p = this.identifierNext.get(p))
      keys.push(this.identifierKeys.key(this.identifierKeyNo.get(p)));
    // Sorting `type:value` keys sorts by type, then value: no type name is a prefix of another.
    if (keys.length > 1) keys.sort();
    let out = '[';
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j] as string;
      const colon = key.indexOf(':');
      out += `${j === 0 ? '' : ','}{"type":"${key.slice(0, colon)}","value":${jsonString(key.slice(colon + 1))}}`;
    }
    return `${out}]`;
  }

  /** The addresses of company i as a staged JSON field, in file order. */
  private addressesField(i: number): string {
    let p = this.addressHead[i] as number;
    if (p < 0) return EMPTY_LIST;
    let out = '[';
    for (let first = true; p >= 0; p = this.addressNext.get(p), first = false) {
      const f = this.addresses.text(p).split(ADDRESS_SEP) as [string, string, string, string, string, string];
      out += `${first ? '' : ','}{"address_line":${jsonText(f[0])},"city":${jsonText(f[1])},"region":${jsonText(f[2])},"postal_code":${jsonText(f[3])},"country":${jsonText(f[4])},"type":${jsonText(f[5])}}`;
    }
    return `${out}]`;
  }

  /**
   * Writes the SUPPLIES rows of edges [from, to) and collects their Edge rows up
   * to the evidence, which the Edge row sink completes.
   */
  private writeEdges(d: DeriveState, from: number, to: number, prefixes: TextBuffer): void {
    const E = this.edges;
    const { sup, cus, latest, latestFin } = d;
    const sw = this.w('SUPPLIES');
    for (let e = from; e < to; e++) {
      const id = this.edgeIds.key(e);
      const s = this.vids.key(sup[e] as number);
      const c = this.vids.key(cus[e] as number);
      const label = this.labels.key(E.label[e] as number);
      const status = num(E.status[e] as number);
      const ld = iso(latest[e] as number);
      const lf = iso(latestFin[e] as number);
      const lm = iso(E.lastMod[e] as number);
      const conf = String(E.conf[e]);
      const hs = E.hs[e] as string;
      const types = this.typesField(E.evTypes[e] as number, this.extraTypes.get(e));
      prefixes.write(`${id}\t${s}\t${c}\t${label}\t${status}\t${ld}\t${lf}\t${lm}\t${conf}\t${hs}\n`);
      sw.write(`${s}\t${c}\t${id}\t${conf}\t${ld}\t${status}\t${types}\t${hs}\n`);
    }
  }

  /** Computes counts, per-edge summaries and cluster edges, and writes the remaining tables. */
  private async derive(): Promise<void> {
    const E = this.edges;
    const n = E.n;
    const nc = this.vids.size;
    this.progress({ phase: 'derive', rows: 0, totalRowsHint: n });

    // Distinct supplier / customer counts: with edges ordered by (customer, supplier), equal pairs are adjacent.
    const all = new Int32Array(n);
    for (let e = 0; e < n; e++) all[e] = e;
    const sup = E.sup.subarray(0, n);
    const cus = E.cus.subarray(0, n);
    const byPair = Stager.sortBy(Stager.sortBy(all, sup, nc), cus, nc);
    const countSup = new Int32Array(nc);
    const countCus = new Int32Array(nc);
    const evSup = new Float64Array(nc);
    const evCus = new Float64Array(nc);
    let ps = -1;
    let pc = -1;
    for (let i = 0; i < n; i++) {
      const e = byPair[i] as number;
      const s = sup[e] as number;
      const c = cus[e] as number;
      if (s !== ps || c !== pc) {
        countSup[c] = (countSup[c] as number) + 1;
        countCus[s] = (countCus[s] as number) + 1;
        ps = s;
        pc = c;
      }
      const k = E.evCount[e] as number;
      evSup[c] = (evSup[c] as number) + k;
      evCus[s] = (evCus[s] as number) + k;
    }

    // Effective per-edge dates: the file's value, else the evidence maximum.
    const latest = E.latest;
    const latestFin = E.latestFin;
    for (let e = 0; e < n; e++) {
      if (Number.isNaN(latest[e])) latest[e] = E.evMax[e] as number;
      if (Number.isNaN(latestFin[e])) latestFin[e] = E.evMaxFin[e] as number;
    }

    // Cluster edges: cross-cluster edges grouped by (supplier cluster, customer cluster).
    const clusterOf = this.clusterOf;
    const nClusters = this.clusterCid.length;
    const ca = new Int32Array(n);
    const cb = new Int32Array(n);
    let cross = 0;
    for (let e = 0; e < n; e++) {
      ca[e] = clusterOf[sup[e] as number] as number;
      cb[e] = clusterOf[cus[e] as number] as number;
      if (ca[e] !== cb[e]) cross++;
    }
    const crossEdges = new Int32Array(cross);
    cross = 0;
    for (let e = 0; e < n; e++) if (ca[e] !== cb[e]) crossEdges[cross++] = e;
    const byCluster = Stager.sortBy(Stager.sortBy(crossEdges, cb, nClusters), ca, nClusters);
    const d: DeriveState = {
      n,
      sup,
      cus,
      latest,
      latestFin,
      ca,
      cb,
      byCluster,
      countSup,
      countCus,
      evSup,
      evCus,
    };
    const cs = this.w('CLUSTER_SUPPLIES');
    // Hot loops live in small synchronous methods that the JIT optimises well;
    // this async method only awaits the writers between batches.
    for (let i = 0; i < byCluster.length;) {
      i = this.writeClusterEdges(d, i, BATCH);
      if (cs.full) await cs.flush();
    }
    this.progress({ phase: 'derive', rows: n, totalRowsHint: n });

    const cw = this.w('Company');
    for (let i = 0; i < nc; i += BATCH) {
      this.writeCompanies(d, i, Math.min(nc, i + BATCH));
      if (cw.full) await cw.flush();
      if (i % PROGRESS_EVERY < BATCH)
        this.progress({ phase: 'write', file: 'Company', rows: i, totalRowsHint: nc });
    }
    this.counts.Company = nc;

    const sw = this.w('SUPPLIES');
    const sink = this.evidence as EvidenceSink;
    await sink.startEdges(this.w('Edge'));
    this.writers.delete('Edge');
    let reported = 0;
    const nb = this.nBuckets;
    const prefixes = new TextBuffer();
    for (let b = 0; b < nb; b++) {
      const lo = bucketStart(b, nb, n);
      const hi = bucketStart(b + 1, nb, n);
      for (let e = lo; e < hi; e += BATCH) {
        this.writeEdges(d, e, Math.min(hi, e + BATCH), prefixes);
        if (sw.full) await sw.flush();
        if (e - reported >= PROGRESS_EVERY) {
          reported = e;
          this.progress({ phase: 'write', file: 'Edge', rows: e, totalRowsHint: n });
        }
      }
      await sink.writeEdges(b, lo, hi, prefixes.take());
    }
    await sink.finish();
    this.counts.Edge = n;
    this.counts.SUPPLIES = n;
    this.progress({ phase: 'write', file: 'Edge', rows: n, totalRowsHint: n });
    await this.flushAll(true);
  }
}

/**
 * Validates the import files in inputDir and writes the staging files of every
 * table into stagingDir, then the `_SUCCESS` marker. Bad rows are rejected and
 * reported, their dependants with them; the import stops with an
 * ImportAbortedError when more than `maxRejected` rows are rejected or when a
 * required file or column is missing, and then leaves no staging files behind.
 */
export async function stageImport(
  inputDir: string,
  stagingDir: string,
  opts: StageOptions = {},
): Promise<StageResult> {
  const maxRejected = opts.maxRejected ?? DEFAULT_MAX_REJECTED;
  return new Stager(inputDir, stagingDir, maxRejected, opts.onProgress, opts.evidenceWorker).run();
}

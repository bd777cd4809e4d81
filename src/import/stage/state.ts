/**
 * Everything one staging run shares: what each input file leaves for the files
 * read after it and for the derive step, the writers of the staging files, and
 * the rejected rows. Each input file's module fills its own part in file order.
 */
import { countryCode, countryName } from '../../domain/countries';
import { TABLES } from '../../store/tables';
import type { TableName } from '../../store/tables';
import { ByteStore } from '../csv';
import type { ChunkWriter } from '../csv';
import type { EvidenceSink } from '../evidence-buckets';
import {
  DateParser,
  INPUT_FILES,
  ValueError,
  checkCountry,
  checkListElement,
  checkToken,
  excerpt,
  normDomain,
  normInteger,
} from '../format';
import { memoize } from '../../memoize';
import { ImportAbortedError } from '../stage-result';
import type { ImportProgress, RejectedRow, StagedItems } from '../stage-result';
import { AsciiIndex, StringIndex } from '../string-index';
import { EdgeStore, IntList } from './columns';

/**
 * The young generation of a staging thread, in MiB (three semi-spaces of 64). Measured at 1M
 * companies: 64 MiB semi-spaces saved the staging 7 s of 70; the memory is the import's, not a
 * server's, and it is given back when the thread ends.
 */
export const STAGE_YOUNG_GENERATION_MB = 192;

/** Rows between two progress reports. */
export const PROGRESS_EVERY = 50000;
/** Rows written between two awaits of the writers in the derive and write steps. */
export const BATCH = 4096;

const FILE_RANK: Record<string, number> = {};
Object.values(INPUT_FILES).forEach((f, i) => (FILE_RANK[f.file] = i));

/** An ISO 3166 alpha-2 or alpha-3 code as the country's ISO 3166 English short name; any other value as given. */
function canonicalCountry(v: string): string {
  if (!/^[A-Za-z]{2,3}$/.test(v)) return v;
  const code = countryCode(v);
  return (code && countryName(code)) ?? v;
}

/** Room for evidence id fingerprints at first; it doubles as needed. */
const FINGERPRINTS_FIRST = 1 << 16;

/** Most warnings kept in full; beyond, they are only counted. */
const MAX_WARNINGS = 100_000;

export class StageState {
  readonly rejected: RejectedRow[] = [];
  /** Values kept as given but worth a look (a country no ISO 3166 code or name matches). */
  readonly warnings: RejectedRow[] = [];
  warningCount = 0;
  readonly inputRows: Record<string, number> = {};
  readonly counts = {} as Record<TableName, number>;
  readonly items: StagedItems = { evidence: 0, identifiers: 0, addresses: 0 };
  readonly writers = new Map<TableName, ChunkWriter>();
  /** Takes the evidence items, then writes the Edge rows with them (see evidence-buckets.ts). */
  evidence: EvidenceSink | null = null;
  nBuckets = 0;
  readonly dates = new DateParser();
  // Values that repeat across millions of rows are checked once each.
  readonly country = memoize((v) => canonicalCountry(checkCountry(v)));
  /** '1' when a country value names an ISO 3166 country, else ''. */
  readonly knownCountry = memoize((v) => (countryCode(v) === null ? '' : '1'));
  readonly token = memoize(checkToken);
  readonly integer = memoize(normInteger);
  readonly domain = memoize(normDomain);
  /** Evidence types end up in lists (evidence_types). */
  readonly evidenceType = memoize((v) => checkListElement(checkToken(v)));

  // companies.csv
  readonly vids = new StringIndex(1 << 16);
  readonly companyLine = new IntList();
  /** Per company, its staged columns between cid_id and the derived ones, tab-separated. */
  readonly companyMid = new ByteStore();
  /** Per company, its staged columns after the JSON ones (aliases, industry), tab-separated. */
  readonly companyTail = new ByteStore();
  readonly rejectedCompanies = new Map<string, number>();

  // clusters.csv
  /** Per company, the number of the clusters.csv cluster it was listed in, or -1. */
  memberOf = new Int32Array(0);
  /** Per company, its cluster in the numbering below, singletons included. */
  clusterOf = new Int32Array(0);
  clusterCid: string[] = [];
  clusterParent = new Int32Array(0);
  clusterSize = new Int32Array(0);
  /** Clusters named in clusters.csv come first; the rest are companies on their own. */
  realClusters = 0;

  // identifiers.csv
  /** Distinct `type:value` keys, so that an identifier shared by companies is kept once. */
  readonly identifierKeys = new StringIndex(1 << 16);
  /** Per company, a linked list of its identifiers (key number, line): duplicate checks, then its JSON. */
  identifierHead = new Int32Array(0);
  readonly identifierNext = new IntList();
  readonly identifierKeyNo = new IntList();
  readonly identifierLine = new IntList();

  // addresses.csv
  /** Per company, a linked list of its addresses in file order; their values live in `addresses`. */
  addressHead = new Int32Array(0);
  addressTail = new Int32Array(0);
  readonly addressNext = new IntList();
  readonly addresses = new ByteStore();

  // relationships.csv
  edgeIds = new AsciiIndex(1 << 16);
  readonly edges = new EdgeStore();
  readonly rejectedEdges = new Map<string, number>();
  readonly labels = new StringIndex();

  // evidence.csv
  /**
   * Evidence ids are checked for duplicates by sorting 52-bit fingerprints once
   * the file is read; only when two fingerprints match is the file read again
   * with every id kept (exact mode), which is what gives line numbers.
   */
  evidenceExact = false;
  evidenceIds = new StringIndex();
  evidenceLine = new IntList();
  evidenceFp = new Float64Array(FINGERPRINTS_FIRST);
  evidenceFpCount = 0;

  /** Room in evidenceFp for `more` fingerprints after those held. */
  roomForFingerprints(more: number): void {
    const need = this.evidenceFpCount + more;
    if (need <= this.evidenceFp.length) return;
    const b = new Float64Array(Math.max(need, this.evidenceFp.length * 2));
    b.set(this.evidenceFp.subarray(0, this.evidenceFpCount));
    this.evidenceFp = b;
  }

  /** No fingerprints held, as at the start (a file read again). */
  clearFingerprints(): void {
    this.evidenceFp = new Float64Array(FINGERPRINTS_FIRST);
    this.evidenceFpCount = 0;
  }
  /** Rows and bytes of the file being read that another thread has read meanwhile, for progress reports. */
  readonly readBeside = { rows: 0, bytes: 0 };
  /** Hears, about every 50,000 rows, the rows and bytes this thread has read of the file being read. */
  onRead?: (rows: number, bytes: number) => void;
  /** A row of evidence.csv reused the id of a rejected one (refused with that row's line in its reason). */
  evidenceIdReused = false;
  /** Evidence ids of rejected rows, by the first such line: a later row may not reuse one. */
  readonly rejectedEvidence = new Map<string, number>();
  /** Evidence types numbered by first sight: the first 30 are bits of EdgeStore.evTypes. */
  readonly typeBits = new StringIndex();
  /** Types past the first 30, per edge. */
  readonly extraTypes = new Map<number, Set<string>>();
  readonly typesCache = new Map<number, string>();

  constructor(
    readonly inputDir: string,
    readonly stagingDir: string,
    readonly maxRejected: number,
    private readonly onProgress: ((p: ImportProgress) => void) | undefined,
  ) {
    for (const t of Object.keys(TABLES) as TableName[]) this.counts[t] = 0;
  }

  /** The import stops: with every row rejected so far, and the warnings of the rows loaded. */
  aborted(message: string): ImportAbortedError {
    return new ImportAbortedError(message, this.sortedRejected(), this.warnings, this.warningCount);
  }

  sortedRejected(): RejectedRow[] {
    return [...this.rejected].sort(
      (a, b) => (FILE_RANK[a.file] ?? 99) - (FILE_RANK[b.file] ?? 99) || a.line - b.line,
    );
  }

  reject(file: string, line: number, reason: string): void {
    this.rejected.push({ file, line, reason });
    if (this.rejected.length > this.maxRejected) {
      throw this.aborted(
        `more than ${this.maxRejected} rejected rows (last: ${file} line ${line}: ${reason})`,
      );
    }
  }

  warn(file: string, line: number, reason: string): void {
    this.warningCount++;
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push({ file, line, reason });
  }

  /** Warnings about the row being read: reported once it is loaded (a warning says "loaded as given"). */
  private readonly rowWarnings: RejectedRow[] = [];

  /** Ends the row being read: its warnings are reported when it was loaded, dropped when rejected. */
  endRow(loaded: boolean): void {
    if (this.rowWarnings.length === 0) return;
    if (loaded) for (const w of this.rowWarnings) this.warn(w.file, w.line, w.reason);
    this.rowWarnings.length = 0;
  }

  /**
   * A country field's staged value: an ISO 3166 code becomes the country's English name; a
   * name is kept as given, with a warning when no ISO 3166 country goes by it (searches by
   * country code or name cannot find it then).
   */
  countryField(file: string, line: number, column: string, value: string): string {
    const staged = this.country(value);
    if (this.knownCountry(value) === '')
      this.rowWarnings.push({
        file,
        line,
        reason: `${column} "${value}" names no ISO 3166 country; kept as given`,
      });
    return staged;
  }

  progress(p: ImportProgress): void {
    this.onProgress?.(p);
  }

  writer(t: TableName): ChunkWriter {
    return this.writers.get(t) as ChunkWriter;
  }

  async flushAll(force = false): Promise<void> {
    for (const w of this.writers.values()) if (force || w.full) await w.flush(force);
    await this.evidence?.flush();
  }

  /** Index of a company a row refers to, or a ValueError naming why it cannot be used. */
  company(vid: string): number {
    const i = this.vids.get(vid);
    if (i >= 0) return i;
    const line = this.rejectedCompanies.get(vid);
    if (line !== undefined)
      throw new ValueError(`company "${vid}" was rejected (companies.csv line ${line})`);
    throw new ValueError(`unknown company ${excerpt(vid)}`);
  }
}

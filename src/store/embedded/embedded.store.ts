import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../logger';
import type {
  CompanyCore,
  CompanyProfile,
  Direction,
  EdgeRecord,
  RelationshipItem,
} from '../../domain/model';
import type { SearchRow } from '../../domain/search-row';
import type { TierCompany, TierRelationship } from '../../domain/tier-walk';
import { bindLiterals, cypherRoot, loadQuery, splitStatements } from '../cypher-files';
import type { CypherQuery } from '../cypher-files';
import type {
  ClusterMember,
  GraphStore,
  Page,
  RelationshipQuery,
  PathStepDirection,
  PathStep,
  StoreStats,
  TierWalkRequest,
  TierWalkSink,
  CounterpartLookup,
  LoadAlongside,
} from '../graph-store';
import {
  int,
  str,
  toCompanyCore,
  toEdge,
  toProfile,
  toSummary,
  withCounterpart,
  toTierCompany,
  toSearchRow,
  toPathStep,
  toTierRelationship,
} from '../mappers';
import { PointReads, engineClusterRows, relationshipListQuery } from '../point-reads';
import { NO_DATE_FLOOR, domicileSpellings, needsStepWalk, stepParams, walkBySteps } from '../step-walk';
import { firstQuoted, stagedCounts } from '../staging-file';
import { scanExportedSearchRows } from '../staged-search-rows';
import { exportedVidOffsets } from '../exported-vid-offsets';
import { temporaryFor } from '../file-io';
import { runLoadAlongside, together } from '../load-alongside';
import { addExportedEdges, addStagedProfiles, pointFileAlongside } from '../staged-point-file';
import { addExportedRelationships, walkMemoryAlongside } from '../staged-walk-memory';
import { LOAD_ORDER, NEVER_STAGED, STAGING_DELIMITER, stagingFile } from '../tables';
import type { TableName } from '../tables';
import { ConnectionPool } from './connection-pool';
import type { EngineRow } from './connection-pool';
import type { Props } from '../mappers';
import { openDatabase } from './engine';
import { NotHeldExactly, WalkMemory, WalkMemoryBuilder } from '../walk-memory';
import { HeldPointFile, openMatching, writePointFile } from '../point-file';
import { derivedState, oncePerGeneration } from '../derived-state';
import type { DerivedState, GenerationRead } from '../derived-state';
import type { PointFile, PointFileMode, PointFileWriter } from '../point-file';
import type { EngineDatabase } from './engine';

export interface EmbeddedStoreOptions {
  /** Directory holding the graph files (`<dataDir>/graph`). */
  dir: string;
  connections: number;
  bufferPoolMb: number;
  /**
   * Buffer pool of a bulk load (`replaceAll`), in MiB; 0: the engine's default (most
   * of the RAM, given back when the load ends). The relationship load of 1M companies
   * needs well over 1 GiB. Unset: the same as `bufferPoolMb`.
   */
  importBufferPoolMb?: number;
  /**
   * Whether a bulk load (`replaceAll`) compresses the graph it writes (default false). At 1M
   * companies compressing took about 11 of the 66 CPU-s of the engine's load threads, and without
   * it the graph takes about 40% more disk (bench/README.md). Reads are the same either way; what a
   * server writes later (seeds) is compressed as always.
   */
  importCompression?: boolean;
  queryTimeoutMs?: number;
  /** Frontiers up to this size are read key by key (default KEYED_STEP_MAX; tests set 0 to read every frontier at once). */
  keyedStepMax?: number;
  /** Companies per query when the search index reads every company (default SEARCH_ROWS_PER_QUERY; tests set fewer). */
  searchRowsPerQuery?: number;
  /**
   * Tier walks from memory (walk-memory.ts): `off` (default) leaves every walk to the engine;
   * `background` reads the relationships into memory after every data change, without holding
   * anything up, and walks from there once they are read; `wait` makes a walk wait for the read
   * (tests, small graphs).
   */
  walkMemory?: 'off' | 'background' | 'wait';
  /**
   * Point reads from a file (point-file.ts): `off` (default) leaves profiles, edges and
   * counterparts to the engine; `background` writes them into a file beside the graph after
   * every data change (or finds the one written before), without holding anything up, and
   * reads from it once it is there; `wait` makes a read wait for the file (tests, small graphs).
   */
  pointFile?: PointFileMode;
  /**
   * Whether the point-read file holds the edges with their evidence too (default here: companies
   * only; servers take EMBEDDED_POINT_READS_EDGES, true by default). At 1M companies the edges
   * make the file this store writes from the engine 4.7 GB instead of 1.1 GB, and its writing
   * 260-370 s instead of about 30 s; an import writes them as staged lines, 3.2 GB in all.
   */
  pointFileEdges?: boolean;
  /**
   * Whether an import writes the point-read file (with the edges as `pointFileEdges` says) from its
   * staging files while the engine loads them, so that the store serving the new data opens it
   * instead of reading it from the engine (default false; the CLI and servers take
   * EMBEDDED_POINT_READS, as the servers that read the file do).
   */
  pointFileAtImport?: boolean;
  /**
   * Whether an import builds the tier walks' memory from its staging files while the engine loads
   * them and saves it beside the new generation, so that the store serving the new data loads it
   * instead of reading every relationship back from the engine (default false; the CLI and servers
   * take EMBEDDED_WALK_MEMORY, as the servers that hold it do).
   */
  walkMemoryAtImport?: boolean;
  /**
   * Whether the point-read file, once held, is read through into the page cache in the background
   * (HeldPointFile.warmUp), so that the first reads after a start do not wait on the disk (default
   * false; servers take POINT_READS_WARM).
   */
  warmPointFile?: boolean;
  logger?: Logger;
}

const QUERY_NAMES = [
  'company/get-profile',
  'company/get-core',
  'company/get-summary',
  'company/get-cluster-parent',
  'company/list-cluster-members',
  'company/exists',
  'company/stats',
  'relationship/count',
  'relationship/count-cluster',
  'relationship/list-suppliers',
  'relationship/list-customers',
  'relationship/list-cluster-suppliers',
  'relationship/list-cluster-customers',
  'relationship/list-single-cluster-suppliers',
  'relationship/list-single-cluster-customers',
  'edge/get',
  'search/scan-companies-range',
  'search/export-companies',
  'company/vid-offsets',
  'company/profiles-range',
  'company/export-profiles',
  'edge/range',
  'edge/export',
  'edge/count',
  'tierview/step-suppliers',
  'tierview/step-customers',
  'tierview/step-suppliers-of',
  'tierview/step-customers-of',
  'tierview/domiciles',
  'tierview/tiers-suppliers',
  'tierview/tiers-customers',
  'tierview/tier-names-suppliers',
  'tierview/tier-names-customers',
  'tierview/tier-relationships-suppliers',
  'tierview/tier-relationships-customers',
  'tierview/memory-companies',
  'tierview/memory-relationships',
  'tierview/export-memory-relationships',
  'path/step-customers',
  'path/step-suppliers',
  'path/step-customers-of',
  'path/step-suppliers-of',
] as const;
type QueryName = (typeof QUERY_NAMES)[number];

/** Rows handed to a tier-walk sink at a time. */
const WALK_BATCH = 5_000;
/** Companies per step query of a filtered walk: an `IN` list the engine still answers by key. */
const FRONTIER_CHUNK = 1_000;
/**
 * Relationships one tier-walk query may gather before the tier is split into
 * partitions: the engine holds a query's whole result in its buffer pool, and
 * ~1M rows filled 1 GiB at the 1M-company scale.
 */
const WALK_ROWS_PER_QUERY = 400_000;
/**
 * Frontiers up to this size are stepped with one keyed query per company: the engine
 * answers a key match in about 1 ms and `IN $vids` by a scan of every company (about
 * 30 ms at 1M companies, more with the list's length).
 */
const KEYED_STEP_MAX = 48;
/**
 * Relationships read into the walks' memory per query where the engine cannot write them to a file
 * (tierview/export-memory-relationships): the engine holds each result whole.
 */
const MEMORY_ROWS_PER_QUERY = 400_000;
/**
 * Rows handed over at a time by the full reads that derive data in the background (walk memory,
 * point-read file): few enough that a batch's objects die young. At 1M companies, batches of 5,000
 * profiles or 20,000 relationships were still alive when the young generation was collected, so V8
 * moved them to the old one and went on to allocate such rows there directly: the heap swelled to
 * about 1 GB, mostly garbage, before each full collection, and the first start peaked at 3.4-3.5 GB
 * resident. With 1,000 it still did; with 200 the heap stays under 450 MB.
 */
const DERIVE_BATCH = 200;
/**
 * Bytes of the companies' offsets read from the engine's file of them between two turns of the event
 * loop (see vidOffsetsOf): some 4,000 companies, about a millisecond, so that a server switching to
 * new data answers its requests meanwhile.
 */
const VID_OFFSET_BLOCK_BYTES = 64 << 10;
/**
 * The same for the load of an import by a store not prepared to serve (the CLI's, or a server's
 * before it listens, loading the demo dataset): the walks' memory waits for the offsets, and each
 * turn waits for a block of the point-read file's writing on the same thread, so the file (15 MB at
 * 1M companies) is read in one.
 */
const IMPORT_VID_OFFSET_BLOCK_BYTES = 32 << 20;
/**
 * Rows of the vid-offset table read between two turns of the event loop where the engine could not
 * write them to a file. The engine hands rows over synchronously; batches of 50,000 held a server's
 * requests for up to 1.4 s when it switched to a 1M import (some 1.5 µs a row), and 2,000 let them
 * through every few milliseconds.
 */
const VID_OFFSET_BATCH = 2_000;
/**
 * The same for an import's load by a store not prepared to serve, which waits for the rows before
 * its next table: read 2,000 at a time, each batch waited for a block of the point-read file's
 * writing; at 1M companies the engine stood idle for 9-12 s, with batches of 100,000 about 3-4 s.
 */
const IMPORT_VID_OFFSET_BATCH = 100_000;
/** The walk memory saved beside its graph generation (see derivedDataFile), about 410 MB at 1M companies. */
const WALK_MEMORY_FILE = 'walk-memory';
/** The point-read file beside its graph generation (see derivedDataFile). */
const POINT_FILE = 'point-reads';

/** A file written with or without the edges is another file's worth of rows: part of its key. */
const pointFileKey = (dataKey: string, edges: boolean) =>
  `${dataKey}#${edges ? 'companies+edges' : 'companies'}`;
/**
 * Rows per range query of the point-read file, by kind, where the engine cannot write its exports to
 * a file (profilesThroughFile, edgesThroughFile). The engine holds a query's result whole, and
 * reads every returned column of the whole table whatever the range (the range is a filter, not a
 * seek): each edge range reads all the evidence, about 3.5 s at 1M companies, so edges come in
 * larger ranges. Either way a range is some 110-160 MB of rows (a company's about 1.1 KB as JSON, an
 * edge's 0.65 KB); 250k edges a range took the file's writing from 284 s to 137 s at 1M companies,
 * with the same peak memory.
 */
const POINT_ROWS_PER_QUERY = { companies: 100_000, edges: 250_000 } as const;
/** Companies per query of a search index's read when the engine cannot write them to a file (see scanSearchRows). */
const SEARCH_ROWS_PER_QUERY = 100_000;
/** The search index's rows written by the engine beside the graph (a temporary file; see scanSearchRows). */
const SEARCH_EXPORT_FILE = 'search-rows';
/** The profiles written by the engine beside the graph for the point-read file (a temporary file; see profilesThroughFile). */
const PROFILES_EXPORT_FILE = 'profile-rows';
/** The edges written by the engine beside the graph for the point-read file (a temporary file, which the file links as its edges; see edgesThroughFile). */
const EDGES_EXPORT_FILE = 'edge-rows';
/** The relationships written by the engine beside the graph for the walks' memory (see readWalksMemory). */
const MEMORY_EXPORT_FILE = 'relationship-rows';
/** Every company's offset and vid written by the engine beside the graph (see vidOffsetsOf). */
const VID_OFFSETS_EXPORT_FILE = 'vid-offsets';

/**
 * How long an export to a file may run (throughExport), instead of the reads' limit (30 s by
 * default): at 1M companies the engine writes every edge with its evidence, 2.2 GB, in 11-14 s
 * alone, and took longer than 30 s in a server starting beside its other work.
 */
const EXPORT_TIMEOUT_MS = 60 * 60_000;

/** The `CURRENT` file names the live graph file, so a new graph can be built beside it and swapped in. */
const CURRENT = 'CURRENT';
/** The graph file a new store begins with. */
const FIRST_GENERATION = 'g-000001.kuzu';
/** Present once an import has replaced the graph (even with an empty one): the store is no longer new. */
const IMPORTED = 'IMPORTED';
/**
 * How long a generation must have been CURRENT before an import run beside it removes the ones it
 * replaced: a server's watcher switches within seconds (followExternalImports).
 */
const SWITCH_GRACE_MS = 5 * 60_000;

/** How long a server whose switch to a new generation failed waits before it tries again. */
const SWITCH_RETRY_MS = 15_000;

/**
 * GraphStore on the embedded engine. The data lives in `<dir>/<generation>.kuzu`;
 * `replaceAll` builds the next generation beside the live one and swaps the
 * pointer only once it is complete.
 */
export class EmbeddedGraphStore implements GraphStore {
  readonly engine = 'embedded' as const;
  private db: EngineDatabase | null = null;
  private pool: ConnectionPool | null = null;
  private queries = new Map<QueryName, CypherQuery>();
  private gen = 0;
  private attached: string | null = null;
  /** vid of every company by its internal offset in the attached generation (see company/vid-offsets). */
  private vidByOffset: string[] = [];
  private swapping: Promise<void> = Promise.resolve();
  /** The pool of the generation a switch is closing, while it waits for the reads that hold it. */
  private retiring: ConnectionPool | null = null;
  /**
   * Walk queries run one at a time: each can fill much of the buffer pool, and two
   * at once (two exports) ran it out of memory at 1M companies. Exports still
   * interleave, query by query; reads are not held back.
   */
  private walkQueue: Promise<void> = Promise.resolve();

  private readonly keyedStepMax: number;
  /** The relationships in memory for tier walks, of the generation it was read from. */
  private memory: { generation: number; walks: WalkMemory } | null = null;
  /** A read of the walks' memory under way, or the generation it could not be read for. */
  private memoryRead: GenerationRead<WalkMemory> | null = null;
  /** Whether the server has asked for derived data to be read in the background (prepare). */
  private prepared = false;
  /** The last save of the walks' memory beside the graph (it never rejects). */
  private memorySave: Promise<void> = Promise.resolve();
  /** The point-read file of the generation it was written for. */
  private readonly points: HeldPointFile;

  constructor(private readonly options: EmbeddedStoreOptions) {
    this.keyedStepMax = options.keyedStepMax ?? KEYED_STEP_MAX;
    const root = cypherRoot();
    for (const name of QUERY_NAMES) this.queries.set(name, loadQuery(name, 'embedded', root));
    this.points = new HeldPointFile(
      options.pointFile ?? 'off',
      () => this.gen,
      (generation) => this.writePoints(generation),
      (err, generation) =>
        options.logger?.warn(
          { err, generation },
          'point reads answered by the engine: the point-read file could not be written',
        ),
      { enabled: options.warmPointFile ?? false, logger: options.logger },
    );
  }

  get generation(): number {
    return this.gen;
  }

  async open(): Promise<void> {
    fs.mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    const file = this.currentFile() ?? this.writeCurrent(FIRST_GENERATION);
    await this.attach(file);
    // Imports made while no server ran leave the generations they replaced; the one CURRENT names is
    // the only one to serve from now.
    await this.removeGenerationsBefore(file);
  }

  /**
   * Removes every generation numbered below `keep` with what was derived from it. None is served: a
   * server serves CURRENT, or, until it switches, the generation CURRENT replaced; an import builds
   * above CURRENT.
   */
  private async removeGenerationsBefore(keep: string): Promise<void> {
    const below = generationNumber(keep);
    const old = new Set<string>();
    for (const f of fs.readdirSync(this.options.dir)) {
      const m = /^g-(\d{6})\.kuzu/.exec(f);
      if (m && Number(m[1]) < below) old.add(m[0]);
    }
    for (const g of old) {
      await removeGraphFiles(path.join(this.options.dir, g));
      this.options.logger?.info({ generation: g }, 'removed a graph generation an import replaced');
    }
  }

  /** No import has replaced the graph since the store was created (a seed makes it hold companies). */
  get pristine(): boolean {
    return !fs.existsSync(path.join(this.options.dir, IMPORTED));
  }

  async close(): Promise<void> {
    // A walk in progress does not hold the process's end: its next query is refused instead.
    this.retiring?.cut();
    this.pool?.cut();
    await this.swapping;
    this.gen++; // a read of the walks' memory under way stops at its next query
    await this.memoryRead?.done;
    await this.memorySave;
    await this.points.close();
    await this.detach();
  }

  /** The graph file CURRENT names, the one served once every server has switched; null before any. */
  currentFile(): string | null {
    const p = path.join(this.options.dir, CURRENT);
    if (!fs.existsSync(p)) return null;
    const name = fs.readFileSync(p, 'utf8').trim();
    return /^g-\d{6}\.kuzu$/.test(name) ? name : null;
  }

  private writeCurrent(name: string): string {
    const tmp = path.join(this.options.dir, `${CURRENT}.tmp`);
    fs.writeFileSync(tmp, `${name}\n`);
    fs.renameSync(tmp, path.join(this.options.dir, CURRENT));
    return name;
  }

  /** `queryTimeoutMs` 0: no limit (bulk loads); reads get the configured limit. */
  private async openPool(
    file: string,
    queryTimeoutMs = this.options.queryTimeoutMs ?? 30_000,
    bufferPoolMb = this.options.bufferPoolMb,
    compression = true,
  ): Promise<{ db: EngineDatabase; pool: ConnectionPool }> {
    const db = openDatabase(path.join(this.options.dir, file), {
      bufferPoolBytes: bufferPoolMb * 1024 * 1024,
      compression,
    });
    try {
      await db.init();
    } catch (err) {
      // The engine locks its file for one process; its own message names neither the cause nor a way out.
      if (err instanceof Error && /could not set lock/i.test(err.message))
        throw new Error(
          `the embedded store in ${this.options.dir} is in use by another process (a server on the same DATA_DIR?): stop that process, or give this one another DATA_DIR`,
          { cause: err },
        );
      throw err;
    }
    try {
      const pool = await ConnectionPool.open(db, this.options.connections, { queryTimeoutMs });
      return { db, pool };
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
  }

  private async attach(file: string): Promise<void> {
    const { db, pool } = await this.openPool(file);
    this.db = db;
    this.pool = pool;
    this.attached = file;
    await this.createSchema(pool);
    await this.loadVidOffsets();
    this.gen++;
    this.dataChanged();
  }

  /** After every change of the data: the walks' memory is of the old data; read it anew if it is kept. */
  private dataChanged(): void {
    this.memory = null;
    if (this.prepared && this.options.walkMemory === 'background') void this.walksMemory(false);
    this.points.changed(this.prepared);
  }

  derivedData(): Record<string, DerivedState> {
    return {
      walk_memory: derivedState(
        this.prepared && (this.options.walkMemory ?? 'off') !== 'off',
        this.memory?.generation === this.gen,
        this.memoryRead,
        this.gen,
      ),
      point_reads: this.prepared ? this.points.state : 'off',
    };
  }

  private async writePoints(generation: number): Promise<PointFile | null> {
    const started = Date.now();
    const pool = this.live;
    const stale = () => this.gen !== generation || this.pool !== pool;
    const derived = this.derivedDataFile(POINT_FILE);
    if (!derived) return null;
    const withEdges = this.options.pointFileEdges ?? false;
    const keyOf = (edges: boolean) => pointFileKey(derived.key, edges);
    const saved = { file: derived.file, key: keyOf(withEdges) };
    const [stats] = await this.q('company/stats');
    const [edgeCount] = withEdges ? await this.q('edge/count') : [];
    const total = { companies: int(stats?.companies), edges: withEdges ? int(edgeCount?.edges) : 0 };
    // Without the edges asked for, a file that holds them too serves its companies (getEdge leaves its edges).
    const same = (counts: Readonly<Record<'companies' | 'edges', number>>) =>
      counts.companies === total.companies && (!withEdges || counts.edges === total.edges);
    let written = false;
    let companiesMs = 0;
    let file = await openMatching(saved.file, saved.key, same, this.options.logger);
    // Turning the edges off needs no new file: the one written with them holds every company too.
    if (!file && !withEdges) file = await openMatching(saved.file, keyOf(true), same, this.options.logger);
    if (!file) {
      // The walks' memory reads every relationship too: one full read at a time spares the engine's
      // buffer pool. A file already there (an import wrote it) is opened at once.
      if (this.memoryRead?.generation === generation) await this.memoryRead.done;
      if (stale()) return null;
      const ranges = (
        query: QueryName,
        end: number,
        rows: number,
        perQuery: number,
        add: (rows: EngineRow[]) => void,
      ) =>
        this.streamRanges(pool, query, end, rangeWidth(end, rows, perQuery), DERIVE_BATCH, add, {
          queued: true,
          stop: stale,
        });
      file = await writePointFile(saved.file, saved.key, total, async (writer) => {
        if (!(await this.profilesThroughFile(pool, writer, stale)))
          await ranges(
            'company/profiles-range',
            this.vidByOffset.length,
            total.companies,
            POINT_ROWS_PER_QUERY.companies,
            (rows) => writer.addCompanies(rows.map(toProfile)),
          );
        companiesMs = Date.now() - started;
        if (withEdges && !(await this.edgesThroughFile(pool, writer, total.edges, stale)))
          await ranges(
            'edge/range',
            int(edgeCount?.last) + 1,
            total.edges,
            POINT_ROWS_PER_QUERY.edges,
            (rows) => writer.addEdges(rows.map(toEdge)),
          );
        return !stale();
      });
      // The data changed under the read (a file of another generation is closed by the holder).
      if (!file) return null;
      written = true;
    }
    this.options.logger?.info(
      { ...total, ms: Date.now() - started, ...(written ? { companiesMs } : {}), file: saved.file },
      written ? 'point-read file written' : 'point-read file opened',
    );
    return file;
  }

  /**
   * Adds every company's profile to `writer` through a file the engine writes in one scan
   * (company/export-profiles), as an import adds them from its staged lines; false, with nothing
   * added, when the engine could not write the file (the profiles are then read range by range).
   */
  private profilesThroughFile(
    pool: ConnectionPool,
    writer: PointFileWriter,
    stop: () => boolean,
  ): Promise<boolean> {
    return this.throughExport(
      pool,
      'company/export-profiles',
      PROFILES_EXPORT_FILE,
      'profiles for the point-read file read range by range',
      (file, afterBlock) => addStagedProfiles(writer, file, (header) => header, afterBlock),
      { queued: true, stop },
    );
  }

  /**
   * Adds every edge to `writer` through a file the engine writes in one scan (edge/export), kept as
   * the file's edges as an import keeps its staged Edge lines; false, with nothing added, when the
   * engine could not write the file (the edges are then read range by range).
   */
  private edgesThroughFile(
    pool: ConnectionPool,
    writer: PointFileWriter,
    edges: number,
    stop: () => boolean,
  ): Promise<boolean> {
    return this.throughExport(
      pool,
      'edge/export',
      EDGES_EXPORT_FILE,
      'edges for the point-read file read range by range',
      (file, afterBlock) => addExportedEdges(writer, file, edges, afterBlock),
      { queued: true, stop },
    );
  }

  /**
   * Has the engine write the rows of `query` to a temporary file of its own beside the graph (see
   * exportStatement), hands it to `read` and removes it; false, after warning with `fallback`, when
   * the engine could not write it or had to quote a value in it (one holding a tab or a line break,
   * as a Cypher seed may store; no import does): the caller then reads by ranges, having been given
   * nothing from the file, so the file is looked through for a quote before it is read (some 0.4 s
   * for the 2.2 GB of the edges at 1M, from the page cache). `queued`: the export waits its
   * turn with the other full reads (oneWalkQueryAtATime). `read` is given a check to call after each
   * block of the file: it throws once the pool no longer serves or `stop` (the caller's data changed
   * or the store closing) is true, so that a close or a switch does not wait for the whole file (at
   * 1M companies 3 s for the edges, 11 s for the walks' relationships); the look for a quote stops
   * so too. A read so stopped answers true when the caller has a `stop` of its own, having given it
   * part of the rows: the caller, whose own stop condition then holds (it covers the pool too), drops
   * them (as its ranges stop on the same condition), and no warning is logged for it. A caller
   * without one gets the stop as an error: it cannot tell part of the rows from all of them. `own`:
   * `pool` is an import's, not the one served, and gone only by `stop`. `blockBytes`: the look for a
   * quote reads so much a turn (4 MiB by default), as the caller's read may. `written`: called once
   * the engine has written the file and it holds no quote, before it is read: the caller will need
   * the engine no more for these rows (not called when the answer is false: the caller then reads
   * by ranges, through the engine).
   */
  private async throughExport(
    pool: ConnectionPool,
    query: QueryName,
    name: string,
    fallback: string,
    read: (file: string, afterBlock: () => void) => Promise<void>,
    opts: {
      queued?: boolean;
      stop?: () => boolean;
      own?: boolean;
      blockBytes?: number;
      written?: () => void;
    } = {},
  ): Promise<boolean> {
    // A file of its own: two reads at once (a test's, say) would otherwise write one file over the other.
    const file = temporaryFor(path.join(this.options.dir, name), '.csv', true);
    // The pool's data replaced or closed while the export waited its turn: not written, and the
    // caller's ranges stop at once (they check the same), where a whole export would hold a close.
    // An import's own pool serves nothing and is closed by the import alone (a close waits for it).
    const gone = () => (!opts.own && this.pool !== pool) || (opts.stop?.() ?? false);
    const stopIfGone = () => {
      if (gone()) throw new ExportReadStopped();
    };
    try {
      const write = () =>
        gone()
          ? Promise.reject(new Error('graph store closed or switched'))
          : pool.run(exportStatement(this.queries.get(query)!.text, file), { timeoutMs: EXPORT_TIMEOUT_MS });
      try {
        await (opts.queued ? this.oneWalkQueryAtATime(write) : write());
      } catch (err) {
        // A disk without room for it, say: the ranges need none.
        if (!gone())
          this.options.logger?.warn({ err, file }, `${fallback}: the engine could not write them to a file`);
        return false;
      }
      const quoted = await firstQuoted(file, stopIfGone, opts.blockBytes);
      if (quoted >= 0) {
        if (!gone())
          this.options.logger?.warn(
            { file, byte: quoted },
            `${fallback}: the engine quoted a value (one holding a tab or a line break), which its file cannot carry as staging text`,
          );
        return false;
      }
      // Only now: a quoted file sends the caller back to the engine, which an import's next table
      // would then be loading beside its reads.
      opts.written?.();
      await read(file, stopIfGone);
      return true;
    } catch (err) {
      if (err instanceof ExportReadStopped && opts.stop) return true;
      throw err;
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  /** Reads the relationships into memory for tier walks now and after every data change, if they are kept. */
  prepare(): void {
    this.prepared = true;
    this.dataChanged();
  }

  /**
   * The walks' memory of the data as it is now, or null. Starts reading it when it is kept
   * and not read yet for this generation; `wait`: resolves when that read ends.
   */
  private async walksMemory(wait: boolean): Promise<WalkMemory | null> {
    const generation = this.gen;
    if ((this.options.walkMemory ?? 'off') === 'off') return null;
    if (this.memory?.generation === generation) return this.memory.walks;
    this.memoryRead = oncePerGeneration(
      this.memoryRead,
      generation,
      () => this.gen,
      (g) => this.readWalksMemory(g),
      (err, g) =>
        this.options.logger?.warn(
          { err, generation: g },
          'tier walks read by the engine: the relationships could not be held in memory',
        ),
    );
    return wait ? this.memoryRead.done : null;
  }

  private async readWalksMemory(generation: number): Promise<WalkMemory | null> {
    const started = Date.now();
    const pool = this.live;
    const vids = this.vidByOffset;
    const stale = () => this.gen !== generation || this.pool !== pool;
    const [counted] = await this.q('relationship/count');
    const total = int(counted?.relationships);
    const saved = this.derivedDataFile(WALK_MEMORY_FILE);
    if (saved) {
      const loaded = await WalkMemory.load(saved.file, saved.key, vids).catch((err: unknown) => {
        this.options.logger?.warn({ err, file: saved.file }, 'saved walk memory unreadable; reading it anew');
        return null;
      });
      if (stale()) return null;
      if (loaded && loaded.relationships === total) {
        this.memory = { generation, walks: loaded };
        this.options.logger?.info(
          { relationships: total, ms: Date.now() - started, file: saved.file },
          'relationships held in memory for tier walks: loaded',
        );
        return loaded;
      }
    }
    const builder = new WalkMemoryBuilder(vids, total);
    await this.oneWalkQueryAtATime(() =>
      pool.stream(this.queries.get('tierview/memory-companies')!, {}, DERIVE_BATCH, (rows) =>
        builder.addCompanies(rows),
      ),
    );
    const exported = await this.throughExport(
      pool,
      'tierview/export-memory-relationships',
      MEMORY_EXPORT_FILE,
      'relationships for the tier walks read range by range',
      (file, afterBlock) => addExportedRelationships(builder, file, afterBlock),
      { queued: true, stop: stale },
    );
    if (!exported)
      await this.streamRanges(
        pool,
        'tierview/memory-relationships',
        vids.length,
        rangeWidth(vids.length, total, MEMORY_ROWS_PER_QUERY),
        DERIVE_BATCH,
        (rows) => builder.addRelationships(rows),
        { queued: true, stop: stale },
      );
    if (stale()) return null;
    const walks = builder.finish();
    if (walks.relationships !== total)
      throw new NotHeldExactly('the relationships read are not those counted');
    const [clusters] = await this.q('relationship/count-cluster');
    if (stale()) return null;
    walks.keepClustersIf(int(clusters?.relationships), this.options.logger);
    this.memory = { generation, walks };
    this.options.logger?.info(
      { relationships: total, mb: Math.round(walks.bytes / 1048576), ms: Date.now() - started },
      'relationships held in memory for tier walks',
    );
    if (saved) this.memorySave = walks.saveLogged(saved.file, saved.key, this.options.logger);
    return walks;
  }

  /** Offsets are fixed within a generation; seeds add companies, so they reload it too. */
  private async loadVidOffsets(): Promise<void> {
    this.vidByOffset = await this.vidOffsetsOf(this.live);
  }

  /**
   * The vid of every company of `pool`'s graph by its internal offset, from a file the engine writes
   * in one scan (company/vid-offsets), or read row by row where it cannot. `own`: `pool` is an
   * import's (see throughExport). `long`: for the load of an import by a store that does not serve
   * (see IMPORT_VID_OFFSET_BLOCK_BYTES): read in one turn; otherwise in short ones. `engineFree`:
   * called once the engine is no longer needed for them, which is before they are read from the
   * file, or when they have been read row by row.
   */
  private async vidOffsetsOf(
    pool: ConnectionPool,
    { own = false, long = false, engineFree = () => {} } = {},
  ): Promise<string[]> {
    const blockBytes = long ? IMPORT_VID_OFFSET_BLOCK_BYTES : VID_OFFSET_BLOCK_BYTES;
    let exported: string[] | null = null;
    try {
      await this.throughExport(
        pool,
        'company/vid-offsets',
        VID_OFFSETS_EXPORT_FILE,
        "the companies' offsets read row by row",
        async (file, afterBlock) => {
          exported = await exportedVidOffsets(file, afterBlock, blockBytes);
        },
        { own, blockBytes, written: engineFree },
      );
    } catch (err) {
      // An import's load has gone on to its next table by now (engineFree): it does without them
      // (the walks' memory is then a server's to derive). A server's start or switch reads the rows.
      if (own || err instanceof ExportReadStopped) throw err;
      this.options.logger?.warn(
        { err },
        "the companies' offsets read row by row: the engine's file of them could not be read",
      );
    }
    // Set only by a whole read of the file; otherwise the rows, from the engine.
    if (exported) return exported;
    const byOffset: string[] = [];
    const batch = long ? IMPORT_VID_OFFSET_BATCH : VID_OFFSET_BATCH;
    try {
      await pool.stream(this.queries.get('company/vid-offsets')!, {}, batch, (rows) => {
        for (const r of rows) byOffset[int(r.off)] = str(r.vid) ?? '';
      });
    } finally {
      engineFree();
    }
    return byOffset;
  }

  private async detach(): Promise<void> {
    const pool = this.pool;
    const db = this.db;
    this.pool = null;
    this.db = null;
    this.attached = null;
    await closeEngine(pool, db);
  }

  private async createSchema(pool: ConnectionPool): Promise<void> {
    const ddl = fs.readFileSync(path.join(cypherRoot(), 'schema', 'create.embedded.cypher'), 'utf8');
    for (const statement of splitStatements(ddl)) await pool.run(statement);
  }

  private get live(): ConnectionPool {
    if (!this.pool) throw new Error('graph store is not open');
    return this.pool;
  }

  /** Runs the query `name` on `pool`: the generation served, unless a read holds another (see walkTiers). */
  private q(name: QueryName, params: Record<string, unknown> = {}, pool = this.live): Promise<EngineRow[]> {
    return pool.query(this.queries.get(name)!, params);
  }

  /** The rows of a `$vid` query for each of `vids`, one keyed query each on `pool` (see KEYED_STEP_MAX). */
  private async byKey(
    pool: ConnectionPool,
    query: CypherQuery,
    vids: readonly string[],
    params: Record<string, unknown> = {},
  ): Promise<EngineRow[]> {
    const parts = await Promise.all(vids.map((vid) => pool.query(query, { ...params, vid })));
    return parts.flat();
  }

  private readonly reads = new PointReads((name, params) => this.q(name, params));

  async stats(): Promise<StoreStats> {
    return this.reads.stats();
  }

  async getCompany(vid: string): Promise<CompanyProfile | null> {
    await this.points.ready();
    const file = this.points.file;
    if (file) {
      return file.company(vid);
    }
    return this.reads.getCompany(vid);
  }

  async getCompanies(vids: readonly string[]): Promise<CompanyCore[]> {
    await this.points.ready();
    const file = this.points.file;
    // A profile holds its row's core fields already mapped, which the mapper keeps as they are.
    if (file) return file.companies(vids).map((p) => toCompanyCore(p as unknown as Props));
    // Concurrent primary-key lookups beat one query over the list on this engine.
    const rows = await Promise.all(vids.map((vid) => this.q('company/get-core', { vid })));
    return rows.flatMap(([row]) => (row ? [toCompanyCore(row)] : []));
  }

  async getClusterParent(vid: string): Promise<string | null> {
    const parent = (await this.walksMemory(this.options.walkMemory === 'wait'))?.clusterParentOf(vid);
    return parent !== undefined ? parent : this.reads.getClusterParent(vid);
  }

  async listClusterMembers(
    cidId: string,
    page: { limit: number; offset: number },
  ): Promise<Page<ClusterMember>> {
    const held = (await this.walksMemory(this.options.walkMemory === 'wait'))?.clusterMembersPage(
      cidId,
      page,
    );
    return held ?? this.reads.listClusterMembers(cidId, page);
  }

  async companyExists(vid: string): Promise<boolean> {
    return this.reads.companyExists(vid);
  }

  async listRelationships(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    query: RelationshipQuery,
    counterparts?: CounterpartLookup,
  ): Promise<Page<RelationshipItem>> {
    await this.points.ready();
    // Lists come from the walks' memory once it is held (cluster lists when it holds clusters).
    const memory = await this.walksMemory(this.options.walkMemory === 'wait');
    const held = memory?.listPage(vid, direction, grouping, { ...query, count: query.limit + 1 });
    const rows = held ?? (await this.engineListRows(vid, direction, grouping, query));
    const page = rows.slice(0, query.limit);
    // Stored rows name their counterpart by offset, cluster relationships summed up by vid.
    const vids = page.map((r) => str(r.counterpart_vid) ?? this.vidByOffset[int(r.counterpart_offset)] ?? '');
    // A counterpart read costs as much engine time as the page itself at a hub: read only the unknown.
    const known = vids.map((v) => counterparts?.(v) ?? null);
    const file = this.points.file;
    if (file)
      for (let i = 0; i < vids.length; i++) {
        const profile = known[i] ? null : file.company(vids[i]!);
        // A profile holds its row's summary fields already mapped, which the mapper keeps as they are.
        if (profile) known[i] = toSummary(profile as unknown as Props);
      }
    const read = await Promise.all(
      vids.map((v, i) => (known[i] ? Promise.resolve(null) : this.q('company/get-summary', { vid: v }))),
    );
    const items = page.map((r, i) =>
      withCounterpart(r, known[i] ?? toSummary(read[i]?.[0] ?? { vid: vids[i] }), grouping),
    );
    return { items, hasMore: rows.length > query.limit };
  }

  private engineListRows(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    query: RelationshipQuery,
  ): Promise<Props[]> {
    if (grouping === 'cluster')
      return engineClusterRows((name, params) => this.q(name, params), vid, direction, query);
    const { name, params } = relationshipListQuery(vid, direction, grouping, query);
    // The pool never binds a large SKIP (the engine crashes on it): see withoutSkip.
    return this.q(name, params);
  }

  async getEdge(edgeId: string): Promise<EdgeRecord | null> {
    await this.points.ready();
    const file = this.points.file;
    if (this.options.pointFileEdges && file?.holdsEdges) {
      return file.edge(edgeId);
    }
    return this.reads.getEdge(edgeId);
  }

  private async oneWalkQueryAtATime<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.walkQueue;
    let release!: () => void;
    this.walkQueue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await work();
    } finally {
      release();
    }
  }

  async walkTiers(request: TierWalkRequest, sink: TierWalkSink, signal?: AbortSignal): Promise<boolean> {
    // A walk is many queries: the generation it began on stays open until it ends (see adopt).
    const pool = this.live;
    return pool.hold(() => this.walkTiersOn(pool, request, sink, signal));
  }

  private async walkTiersOn(
    pool: ConnectionPool,
    request: TierWalkRequest,
    sink: TierWalkSink,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const dir = request.direction;
    const evidenceFrom = request.evidenceFrom ?? NO_DATE_FLOOR;
    const anyDate = request.evidenceFrom === null;
    const [rootRow] = await this.q('company/get-profile', { vid: request.root }, pool);
    if (!rootRow) return false;
    const root = toTierCompany(rootRow, 0);
    // The relationships held in memory answer every walk, filters and company details included.
    const memory = await this.walksMemory(this.options.walkMemory === 'wait');
    const rootOffset = memory ? memory.offsetOf(request.root) : -1;
    if (memory && rootOffset >= 0) {
      await memory.walk({ ...request, root, rootOffset, direction: dir }, sink, signal);
      return true;
    }
    const spellings = request.countries
      ? domicileSpellings(
          (await this.q('tierview/domiciles', {}, pool)).map((r) => r.country),
          request.countries,
        )
      : null;
    const params = stepParams(request, spellings);
    if (needsStepWalk(request)) {
      // The native walk's filter takes only literals; the request's filters are
      // values from clients, so they go to the step query as parameters instead.
      const step = this.queries.get(`tierview/step-${dir}`)!;
      const stepOne = this.queries.get(`tierview/step-${dir}-of`)!;
      await walkBySteps(
        root,
        request,
        sink,
        async (vids, onRows) => {
          if (vids.length <= this.keyedStepMax) {
            // A key match per company beats one `IN` that scans every company (see KEYED_STEP_MAX).
            signal?.throwIfAborted();
            const rows = await this.byKey(pool, stepOne, vids, params);
            for (let i = 0; i < rows.length; i += WALK_BATCH) await onRows(rows.slice(i, i + WALK_BATCH));
            return;
          }
          for (let i = 0; i < vids.length; i += FRONTIER_CHUNK) {
            signal?.throwIfAborted();
            await this.oneWalkQueryAtATime(() =>
              pool.stream(step, { ...params, vids: vids.slice(i, i + FRONTIER_CHUNK) }, WALK_BATCH, onRows),
            );
          }
        },
        signal,
      );
      return true;
    }
    await sink.companies([root]);

    // Tiers of every reached company, keyed by internal offset, and the relationships
    // each tier has onwards (an upper bound of the next query's rows).
    const byOffset = new Map<number, TierCompany>();
    const onward = new Array<number>(request.tiers + 1).fill(0);
    const tiersQuery = bindLiterals(
      this.queries.get(
        request.companyDetails === false ? `tierview/tier-names-${dir}` : `tierview/tiers-${dir}`,
      )!,
      { max_tier: request.tiers, evidence_from: evidenceFrom, any_date: anyDate },
    );
    await this.oneWalkQueryAtATime(() =>
      pool.stream(tiersQuery, { root: request.root }, WALK_BATCH, async (rows) => {
        const batch: TierCompany[] = [];
        for (const r of rows) {
          const c = toTierCompany(r, int(r.tier));
          byOffset.set(int(r.company_offset), c);
          onward[c.tier] = (onward[c.tier] ?? 0) + int(r.onward_degree);
          batch.push(c);
        }
        await sink.companies(batch);
      }),
    );
    signal?.throwIfAborted();

    // Tier 0 to 1: the root's own relationships, by key.
    const rootRows = await this.q(`tierview/step-${dir}-of`, { ...params, vid: request.root }, pool);
    const tierOne = new Map<string, TierCompany>();
    for (const c of byOffset.values()) if (c.tier === 1) tierOne.set(c.vid, c);
    const first: TierRelationship[] = [];
    for (const r of rootRows) {
      const other = tierOne.get(str(r.to_vid) ?? '');
      if (!other) continue;
      first.push(
        dir === 'suppliers' ? toTierRelationship(r, other, root) : toTierRelationship(r, root, other),
      );
      if (first.length === WALK_BATCH) await sink.relationships(0, first.splice(0));
    }
    if (first.length > 0) await sink.relationships(0, first);

    for (let tier = 1; tier < request.tiers; tier++) {
      const parts = Math.max(1, Math.ceil((onward[tier] ?? 0) / WALK_ROWS_PER_QUERY));
      const query = bindLiterals(this.queries.get(`tierview/tier-relationships-${dir}`)!, {
        tier,
        evidence_from: evidenceFrom,
        any_date: anyDate,
      });
      for (let part = 0; part < parts; part++) {
        signal?.throwIfAborted();
        await this.oneWalkQueryAtATime(() =>
          pool.stream(query, { root: request.root, parts, part }, WALK_BATCH, async (rows) => {
            const batch: TierRelationship[] = [];
            for (const r of rows) {
              const next = byOffset.get(int(r.to_offset));
              // Only relationships that reach the next tier are rows of the map.
              if (next?.tier !== tier + 1) continue;
              const from = byOffset.get(int(r.from_offset));
              if (!from) continue;
              batch.push(
                dir === 'suppliers' ? toTierRelationship(r, next, from) : toTierRelationship(r, from, next),
              );
            }
            if (batch.length > 0) await sink.relationships(tier, batch);
          }),
        );
      }
    }
    return true;
  }

  async pathSteps(vids: readonly string[], direction: PathStepDirection): Promise<PathStep[]> {
    if (vids.length === 0) return [];
    // The relationships held for tier walks answer a step without asking the engine (about 20 ms
    // of CPU a path search at 1M companies otherwise).
    const memory = await this.walksMemory(this.options.walkMemory === 'wait');
    if (memory) return memory.pathSteps(vids, direction);
    if (vids.length <= this.keyedStepMax) {
      // A key match per company beats one `IN` that scans every company, up to a few dozen.
      return (await this.byKey(this.live, this.queries.get(`path/step-${direction}-of`)!, vids)).map(
        toPathStep,
      );
    }
    const rows = await this.live.query(this.queries.get(`path/step-${direction}`)!, { vids: [...vids] });
    return rows.map(toPathStep);
  }

  async scanSearchRows(onBatch: (rows: SearchRow[]) => void | Promise<void>): Promise<void> {
    // Written to a file by the engine in one scan, then read from it (see search/export-companies);
    // from the pool the read began on, so a swap of the data midway cannot mix two graphs.
    const pool = this.live;
    const read = await this.throughExport(
      pool,
      'search/export-companies',
      SEARCH_EXPORT_FILE,
      'search rows read range by range',
      (file) => scanExportedSearchRows(file, onBatch),
    );
    if (read) return;
    // Not from a pool that no longer serves (closed, or replaced by another generation).
    if (this.pool !== pool) throw new Error('graph store closed or switched while its companies were read');
    await this.scanSearchRanges(pool, onBatch);
  }

  /** scanSearchRows without a file: every company's search fields read range by range from `pool`. */
  private async scanSearchRanges(
    pool: ConnectionPool,
    onBatch: (rows: SearchRow[]) => void | Promise<void>,
  ): Promise<void> {
    // By ranges of offsets: the engine holds a query's whole result in its buffer pool, and one query
    // for every company failed at 1M companies in the serving pool of 512 MiB ("buffer pool is full").
    // All ranges from the pool the scan began on, so a swap of the data midway cannot mix two graphs.
    const end = this.vidByOffset.length;
    // Small batches: the index is built from them on the main thread while the server answers, and
    // a batch of 20,000 held requests for about a second at 1M companies (p90 of /healthz 1.5 s
    // during a first build, against 0.4 s with 2,000; the build took as long).
    await this.streamRanges(
      pool,
      'search/scan-companies-range',
      end,
      rangeWidth(end, end, this.options.searchRowsPerQuery ?? SEARCH_ROWS_PER_QUERY),
      2_000,
      (rows) => onBatch(rows.map(toSearchRow)),
    );
  }

  /**
   * Streams `query` over the internal offsets [0, end), `width` at a time (its `$lo` and `$hi`): the
   * engine holds a query's whole result in its buffer pool, so a read of every company or relationship
   * goes range by range. `queued`: each range waits its turn with the other full reads
   * (oneWalkQueryAtATime); `stop` is asked before each range and ends the read when true.
   */
  private async streamRanges(
    pool: ConnectionPool,
    query: QueryName,
    end: number,
    width: number,
    batch: number,
    onRows: (rows: EngineRow[]) => void | Promise<void>,
    opts: { queued?: boolean; stop?: () => boolean } = {},
  ): Promise<void> {
    for (let lo = 0; lo < end; lo += width) {
      if (opts.stop?.()) return;
      const read = () => pool.stream(this.queries.get(query)!, { lo, hi: lo + width }, batch, onRows);
      await (opts.queued ? this.oneWalkQueryAtATime(read) : read());
    }
  }

  async replaceAll(
    stagingDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
    alongside?: LoadAlongside,
  ): Promise<void> {
    const run = this.swapping.then(() => this.buildAndSwap(stagingDir, onProgress, alongside));
    this.swapping = run.catch(() => undefined);
    return run;
  }

  private async buildAndSwap(
    stagingDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
    alongside?: LoadAlongside,
  ): Promise<void> {
    fs.mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    stagedCounts(stagingDir); // refuses a directory whose staging did not finish
    const previous = this.currentFile();
    // Those before the generation served go before the next one is built, not after, once no
    // server can still be on them: at its peak the import then needs room for two generations
    // beside its staging, not three.
    await this.removeLongReplaced(previous);
    const next = nextGenerationName(previous);
    const nextPath = path.join(this.options.dir, next);
    await removeGraphFiles(nextPath);
    // Whatever the engine made of the next generation before failing to open it goes with the failure.
    const { db, pool } = await this.openPool(
      next,
      0,
      this.options.importBufferPoolMb ?? this.options.bufferPoolMb,
      this.options.importCompression ?? false,
    ).catch(async (err: unknown) => {
      await removeGraphFiles(nextPath);
      throw err;
    });
    // The engine loads on threads of its own; this thread is free for the work alongside meanwhile.
    const loadFailed = new AbortController();
    // Generation `next` has no seeds yet (its files were just removed): its derived files' keys hold.
    const edges = this.options.pointFileEdges ?? false;
    // The walks' memory is indexed by the engine's offsets, known once the companies are loaded.
    const companiesLoaded = deferred<readonly string[]>();
    const besides = runLoadAlongside(
      together(
        alongside,
        this.options.pointFileAtImport
          ? pointFileAlongside(POINT_FILE, (key) => pointFileKey(key, edges), edges, this.options.logger)
          : undefined,
        this.options.walkMemoryAtImport
          ? walkMemoryAlongside(WALK_MEMORY_FILE, companiesLoaded.promise, this.options.logger)
          : undefined,
      ),
      stagingDir,
      (name) => this.derivedFileOf(next, name),
      loadFailed.signal,
      this.options.logger,
    );
    // The read of the companies' offsets, which hands them to the walks' memory (it never rejects).
    let offsetsRead: Promise<void> = Promise.resolve();
    try {
      await this.createSchema(pool);
      let done = 0;
      for (const table of LOAD_ORDER) {
        onProgress?.(table, done, LOAD_ORDER.length);
        await pool.run(copyStatement(table, path.join(stagingDir, stagingFile(table))));
        done++;
        if (table === 'Company' && this.options.walkMemoryAtImport) {
          // The engine runs no read beside its bulk load, so the next table waits for the offsets'
          // export (0.1-0.2 s at 1M companies), not for their reading from the file it wrote. A
          // store that serves keeps its requests' turns short.
          const engineFree = deferred<void>();
          const offsets = this.vidOffsetsOf(pool, {
            own: true,
            long: !this.prepared,
            engineFree: () => engineFree.resolve(),
          });
          offsetsRead = offsets.then(companiesLoaded.resolve, companiesLoaded.reject);
          await Promise.race([engineFree.promise, offsetsRead]);
        }
      }
      onProgress?.('done', done, LOAD_ORDER.length);
      await pool.run('CHECKPOINT');
      await offsetsRead;
      await besides;
    } catch (e) {
      loadFailed.abort();
      companiesLoaded.reject(e);
      await offsetsRead;
      await besides;
      await pool.close();
      await db.close();
      await removeGraphFiles(nextPath);
      throw e;
    }
    await pool.close();
    await db.close();
    // The pointer moves only after the new graph is complete and closed.
    const previousSince = this.currentSince();
    try {
      // IMPORTED first: a store whose pointer moved is never taken for one no import has replaced.
      fs.writeFileSync(path.join(this.options.dir, IMPORTED), '');
      this.writeCurrent(next);
    } catch (err) {
      // A disk with no room for the pointer, say: the graph served is still the one before, and the
      // whole generation built (some 10 GB at 1M companies) would otherwise stay until the next import.
      await removeGraphFiles(nextPath);
      throw err;
    }
    // A store that was serving switches over now; one used only to import (the
    // CLI beside a running server) leaves the switch to the server's watcher.
    if (this.pool) await this.adopt(next);
    // Here the one just replaced stays (a server may serve it until its watcher switches), and those
    // before it go if it has become CURRENT long enough ago during the load: an import whose files
    // no server ever opens keeps two generations, not one per import.
    else await this.removeLongReplaced(previous, previousSince);
  }

  /** Since when (ms since the epoch) CURRENT names the generation it names; undefined without one. */
  private currentSince(): number | undefined {
    return fs.statSync(path.join(this.options.dir, CURRENT), { throwIfNoEntry: false })?.mtimeMs;
  }

  /**
   * Removes the generations before `current` once it has been CURRENT long enough (since `since`)
   * for any server to have switched to it (followExternalImports).
   */
  private async removeLongReplaced(
    current: string | null,
    since: number | undefined = this.currentSince(),
  ): Promise<void> {
    if (current && since !== undefined && Date.now() - since > SWITCH_GRACE_MS)
      await this.removeGenerationsBefore(current);
  }

  /**
   * Switches to another generation and removes the one it replaces with any older one: a generation
   * two imports made while this server was between switches was never served.
   */
  private async adopt(next: string): Promise<void> {
    // The generation served answers until the next one is open, so that no read in between finds the
    // store without a graph; its queries under way finish before it closes.
    const old = { pool: this.pool, db: this.db };
    try {
      await this.attach(next);
    } finally {
      // Unless the next one could not be opened at all: then the old one serves on.
      if (this.pool !== old.pool) {
        this.retiring = old.pool;
        await closeEngine(old.pool, old.db);
        this.retiring = null;
      }
    }
    await this.removeGenerationsBefore(next);
  }

  /**
   * Follows imports made by another process: when `CURRENT` names a new
   * generation, this store switches to it. A switch that fails (the new generation could not be
   * opened: no memory, too many open files) is tried again every `retryMs` while the old one serves
   * on, since an import removes the generations before the one it replaces once that one has been
   * CURRENT for some minutes (SWITCH_GRACE_MS). Returns a function that stops watching.
   */
  followExternalImports(intervalMs = 2000, retryMs = SWITCH_RETRY_MS): () => void {
    const file = path.join(this.options.dir, CURRENT);
    let retry: NodeJS.Timeout | null = null;
    let stopped = false;
    const onChange = () => {
      if (retry) clearTimeout(retry);
      retry = null;
      const name = this.currentFile();
      if (stopped || !name || name === this.attached || !this.pool) return;
      this.swapping = this.swapping
        .then(() => this.adopt(name))
        .then(() => this.options.logger?.info({ generation: name }, 'switched to newly imported graph'))
        .catch((err: unknown) => {
          this.options.logger?.error(
            { err, generation: name, retryInS: retryMs / 1000 },
            'could not switch to the new graph; the one before serves on, and the switch is tried again',
          );
          if (stopped) return;
          retry = setTimeout(onChange, retryMs);
          retry.unref();
        });
    };
    fs.watchFile(file, { interval: intervalMs }, onChange);
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      fs.unwatchFile(file, onChange);
    };
  }

  derivedDataFile(name: string): { file: string; key: string } | null {
    return this.attached ? this.derivedFileOf(this.attached, name) : null;
  }

  /** Where data derived from `generation` as it is now goes, and its key: the seeds run on it are part of it. */
  private derivedFileOf(generation: string, name: string): { file: string; key: string } {
    return {
      file: path.join(this.options.dir, `${generation}.${name}`),
      key: `${generation}#${this.changesOf(generation)}`,
    };
  }

  /** Seeds run on this generation so far, kept beside it so a restart still knows (see derivedDataFile). */
  private changesOf(file: string): number {
    try {
      return Number(fs.readFileSync(path.join(this.options.dir, `${file}.changes`), 'utf8')) || 0;
    } catch {
      return 0;
    }
  }

  async runScript(statements: readonly string[]): Promise<number> {
    // Counted before the statements run: a seed cut off half-way has changed the data too.
    if (this.attached) {
      const changes = path.join(this.options.dir, `${this.attached}.changes`);
      fs.writeFileSync(changes, String(this.changesOf(this.attached) + 1));
    }
    let n = 0;
    for (const s of statements) {
      await this.live.run(s);
      n++;
    }
    await this.loadVidOffsets();
    this.gen++;
    this.dataChanged();
    return n;
  }
}

/**
 * How many internal offsets one range query of a full read covers: `rows` spread over
 * offsets [0, `end`) in ranges of about `perQuery` rows (the engine holds each result whole).
 */
function rangeWidth(end: number, rows: number, perQuery: number): number {
  return Math.max(1, Math.ceil(end / Math.max(1, Math.ceil(rows / perQuery))));
}

function generationNumber(name: string): number {
  return Number(/g-(\d{6})/.exec(name)?.[1] ?? '0');
}

function nextGenerationName(current: string | null): string {
  const n = current ? generationNumber(current) : 0;
  return `g-${String(n + 1).padStart(6, '0')}.kuzu`;
}

/**
 * Removes a generation's files, on Node's thread pool: the kernel frees a file of gigabytes for
 * longer than a request may wait (at 1M companies a switch held every request for up to 1.5 s while
 * the generation it replaced was removed with synchronous calls).
 */
async function removeGraphFiles(file: string): Promise<void> {
  for (const f of [file, `${file}.wal`, `${file}.shadow`, `${file}.tmp`, `${file}.changes`])
    await fs.promises.rm(f, { force: true, recursive: true });
  // Anything derived from it and saved beside it (see derivedDataFile).
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  for (const f of await fs.promises.readdir(dir))
    if (f.startsWith(prefix)) await fs.promises.rm(path.join(dir, f), { force: true });
}

/** Escapes a file path for a Cypher string literal (paths come from our own staging directory). */
function literalPath(p: string): string {
  return `'${p.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The statement that writes the rows of `query` to `file` as staging text: tab-separated with a
 * header, nothing quoted or escaped: no imported value holds a tab, a line break or NEVER_STAGED; one
 * that does (a Cypher seed may store it) comes out quoted, and throughExport then reads by ranges.
 */
function exportStatement(query: string, file: string): string {
  return `COPY (${query.replace(/^\s*\/\/.*$/gm, '').trim()}) TO ${literalPath(file)} (DELIM='${STAGING_DELIMITER}', HEADER=true, QUOTE='${NEVER_STAGED}', ESCAPE='${NEVER_STAGED}')`;
}

/**
 * The bulk-load statement of one staging file: tab-separated, nothing quoted
 * or escaped (src/store/tables.ts). The engine's reader wants a quote and an
 * escape character, so it gets U+0001, which no staged value holds. No field
 * holds a line break, so the engine may split every file between its threads.
 */
export function copyStatement(table: TableName, file: string): string {
  return `COPY ${table} FROM ${literalPath(file)} (FILE_FORMAT='csv', HEADER=true, PARALLEL=true, DELIM='${STAGING_DELIMITER}', QUOTE='${NEVER_STAGED}', ESCAPE='${NEVER_STAGED}')`;
}

/** Thrown by the check a read of an export's file is given, once the data it reads is gone (see throughExport). */
class ExportReadStopped extends Error {
  constructor() {
    super('graph store closed or switched while an export was read');
  }
}

/** Closes a generation's connections once their queries under way are done, then its database. */
async function closeEngine(pool: ConnectionPool | null, db: EngineDatabase | null): Promise<void> {
  if (pool) await pool.close();
  if (db) await db.close();
}

/** A promise with its settling functions; a rejection nobody waits for is not reported as unhandled. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

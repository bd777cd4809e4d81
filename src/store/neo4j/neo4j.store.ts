import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { withoutCredentials } from '../../domain/hosts';
import type { Logger } from '../../logger';
import type {
  CompanyCore,
  CompanyProfile,
  Direction,
  EdgeRecord,
  RelationshipItem,
} from '../../domain/model';
import type { SearchRow } from '../../domain/search-row';
import { cypherRoot, loadQuery, splitStatements } from '../cypher-files';
import type { CypherQuery } from '../cypher-files';
import { toNeo4jDialect } from '../dialect';
import { domicileSpellings, stepParams, walkBySteps } from '../step-walk';
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
  DerivedFileOf,
  LoadAlongside,
} from '../graph-store';
import { runLoadAlongside, together } from '../load-alongside';
import { pointFileAlongside } from '../staged-point-file';
import {
  int,
  str,
  toCompanyCore,
  toSummary,
  withCounterpart,
  toTierCompany,
  toSearchRow,
  toPathStep,
  toProfile,
  toEdge,
} from '../mappers';
import type { Props } from '../mappers';
import { PointReads, engineClusterRows, relationshipListQuery } from '../point-reads';
import { createDriver } from './driver';
import type { Driver, Neo4jConnectionOptions } from './driver';
import { Neo4jExecutor } from './executor';
import type { Row } from './executor';
import { importIntoNeo4j } from './neo4j-import';
import { ADMIN_FILES_GENERATION, writeNeo4jAdminFiles } from './neo4j-admin-files';
import type { AdminFilesResult } from './neo4j-admin-files';
import { NotHeldExactly, WalkMemory, WalkMemoryBuilder } from '../walk-memory';
import {
  HeldPointFile,
  moveDerivedFile,
  openMatching,
  removeDerivedFile,
  writePointFile,
} from '../point-file';
import { derivedState, oncePerGeneration } from '../derived-state';
import type { DerivedState, GenerationRead } from '../derived-state';
import type { PointFile, PointFileMode } from '../point-file';

/** The Neo4j schema version this build creates (`cypher/schema/create.neo4j.cypher`). */
export const NEO4J_SCHEMA_VERSION = 1;

/** Every query the Neo4j adapter runs, by name (`cypher/<name>[.neo4j].cypher`). */
export const NEO4J_QUERY_NAMES = [
  'company/get-profile',
  'company/get-cores',
  'company/get-summaries',
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
  'edge/count',
  'edge/all',
  'company/profiles-all',
  'search/scan-companies',
  'tierview/step-suppliers',
  'tierview/step-customers',
  'tierview/domiciles',
  'tierview/memory-companies',
  'tierview/memory-relationships',
  'path/step-customers',
  'path/step-suppliers',
  'graph/generation',
  'graph/bump-generation',
  'graph/set-schema-version',
  'import/upsert-companies',
  'import/upsert-edges',
  'import/upsert-supplies',
  'import/upsert-cluster-supplies',
] as const;
type QueryName = (typeof NEO4J_QUERY_NAMES)[number];

/** Scripts (several statements, auto-committed one by one) the adapter runs. */
export const NEO4J_SCRIPTS = ['schema/create', 'import/prune'] as const;

/** Companies of one frontier step query: large enough to amortise a round trip, small enough for a quick index seek. */
const FRONTIER_CHUNK = 1_000;
const WALK_BATCH = 5_000;
/**
 * Rows handed over at a time by the full reads of the walks' memory and the point-read file: few
 * enough that a batch's objects die young, as the embedded store's DERIVE_BATCH. With 20,000 the
 * garbage collector was busy for a third of the read; with 2,000, at 1M companies, rows still
 * outlived young collections and filled the old generation: a server's first start with nothing
 * saved held up to 3,085 MiB while it wrote the point-read file (heap 770 MB) against 2,677 MiB (heap
 * 190 MB) with 200 (bench/README.md, 2026-12-04, early morning).
 */
const MEMORY_BATCH = 200;
/** Name of the saved walk memory (see derivedDataFile). */
const WALK_MEMORY_FILE = 'walk-memory';
/** Name of the point-read file (see derivedDataFile). */
const POINT_FILE = 'point-reads';
/** Ending of a derived file an import writes until its data is in place (see nextDerived). */
const IMPORTED_SUFFIX = '.import';
/** Columns of the point-read file's queries that come as epoch milliseconds (see company/profiles-all). */
const POINT_DATES = {
  'company/profiles-all': ['incorporation_date', 'ipo_date'],
  'edge/all': ['latest_edge_date', 'latest_finalized_edge_date', 'last_modified_on'],
} as const;

export interface Neo4jStoreOptions extends Neo4jConnectionOptions {
  database: string;
  queryTimeoutMs: number;
  importBatchSize: number;
  /** Import transactions in flight at once (default 1). */
  importParallel?: number;
  /** Check for imports and seeds by other processes this often (followExternalImports). */
  generationPollMs: number;
  /** Create missing constraints and indexes when opening (the server does; `migrate` does it alone). */
  migrateOnOpen: boolean;
  logger?: Logger;
  /** A driver to use instead of one made from the options (tests). */
  driver?: Driver;
  /** A local directory where data derived from the graph may be saved (see derivedDataFile); unset: nowhere. */
  derivedDir?: string;
  /**
   * Tier walks from memory (walk-memory.ts): `off` (default) leaves every walk to frontier queries;
   * `background` reads every relationship after opening and after every change this store sees, and
   * walks by queries until that read is done; `wait` makes a walk wait for it (tests).
   */
  walkMemory?: 'off' | 'background' | 'wait';
  /**
   * Point reads from a file (point-file.ts) written under `derivedDir` from one streamed read of
   * every profile and edge: `off` (default) sends profiles, edges and list counterparts to Neo4j;
   * `background` writes or opens the file after opening and after every change this store sees
   * (after the walks' memory, so that Neo4j serves one full read at a time), and Neo4j answers until
   * it is there; `wait` makes a point read wait for it (tests).
   */
  pointFile?: PointFileMode;
  /**
   * Whether an import writes that file from its staging files while it loads them, under the key
   * the database will have once the import raises its generation (see nextDerived), so that the
   * servers under `derivedDir` open it instead of reading every profile and edge back (default
   * false; the CLI and servers take NEO4J_POINT_READS).
   */
  pointFileAtImport?: boolean;
  /**
   * Whether the point-read file, once held, is read through into the page cache in the background
   * (HeldPointFile.warmUp), so that the first reads after a start do not wait on the disk (default
   * false; servers take POINT_READS_WARM).
   */
  warmPointFile?: boolean;
}

/** The walks' memory and the database generation it was read at. */
interface HeldWalks {
  /** The store's own generation counter when it was read. */
  generation: number;
  /** `lineage#generation` of the database it was read from. */
  database: string;
  walks: WalkMemory;
}

/**
 * GraphStore on Neo4j 5, through one executor that owns every session. Runs the
 * same query files as the embedded engine, with a `.neo4j.cypher` variant only
 * where the dialects differ or a round trip can be saved.
 */
export class Neo4jGraphStore implements GraphStore {
  readonly engine = 'neo4j' as const;
  private readonly driver: Driver;
  private readonly exec: Neo4jExecutor;
  private readonly queries = new Map<QueryName, CypherQuery>();
  private gen = 0;
  /** The database's own generation when this store last looked (see graph/generation). */
  private seenGeneration: number | null = null;
  /** The lineage of the database's generations (see graph/bump-generation) when this store last looked. */
  private lineage: string | null = null;
  private memory: HeldWalks | null = null;
  private memoryRead: GenerationRead<HeldWalks> | null = null;
  private closed = false;
  private memorySave: Promise<void> = Promise.resolve();
  /**
   * The point-read file of the generation this store has seen. Like the search index and the read
   * cache, it follows that generation: an import by another instance is seen at the next poll
   * (followExternalImports).
   */
  private readonly points: HeldPointFile;

  constructor(private readonly options: Neo4jStoreOptions) {
    const root = cypherRoot();
    for (const name of NEO4J_QUERY_NAMES) this.queries.set(name, loadQuery(name, 'neo4j', root));
    this.driver = options.driver ?? createDriver(options);
    this.exec = new Neo4jExecutor(this.driver, {
      database: options.database,
      queryTimeoutMs: options.queryTimeoutMs,
    });
    this.points = new HeldPointFile(
      options.pointFile ?? 'off',
      () => this.gen,
      (generation) => this.writePoints(generation),
      (err, generation) => {
        if (!this.closed)
          options.logger?.warn(
            { err, generation },
            'point reads answered by Neo4j: the point-read file could not be written',
          );
      },
      { enabled: options.warmPointFile ?? false, logger: options.logger },
    );
  }

  get generation(): number {
    return this.gen;
  }

  private query(name: QueryName): CypherQuery {
    return this.queries.get(name)!;
  }

  private readonly reads = new PointReads((name, params) => this.read(name, params));

  private read(name: QueryName, params: Record<string, unknown> = {}): Promise<Row[]> {
    return this.exec.read(this.query(name), params);
  }

  async open(): Promise<void> {
    try {
      await this.driver.getServerInfo({ database: this.options.database });
      // The server answering does not say that it has the database: a query does, with its own code.
      await this.driver.executeQuery('RETURN 1', {}, { database: this.options.database });
    } catch (e) {
      // A store that did not open is not used: its connections would keep the process alive.
      await this.driver.close().catch(() => undefined);
      throw new Error(openFailure(this.options, e), { cause: e });
    }
    if (this.options.migrateOnOpen) await this.migrate();
    const seen = await this.databaseGeneration();
    this.seenGeneration = seen.generation;
    this.lineage = seen.lineage;
    this.gen++;
    this.dataChanged();
  }

  derivedData(): Record<string, DerivedState> {
    return {
      walk_memory: derivedState(
        (this.options.walkMemory ?? 'off') !== 'off',
        this.memory?.generation === this.gen,
        this.memoryRead,
        this.gen,
      ),
      point_reads: this.points.state,
    };
  }

  /** After every change this store sees: the walks' memory and the point-read file are read again in the background. */
  private dataChanged(): void {
    this.memory = null;
    // The walks' memory first: a point-read file that must be written waits for its read (one full
    // read at a time); a saved one is opened at once.
    if (this.options.walkMemory === 'background') void this.walksMemory(false);
    this.points.changed();
  }

  /**
   * Opens the point-read file saved for the database's generation, or writes it from one streamed
   * read of every profile and one of every edge. Kept only when the generation is the same before
   * and after and it holds as many companies and edges as counted.
   */
  private async writePoints(generation: number): Promise<PointFile | null> {
    const started = Date.now();
    const stale = () => this.gen !== generation || this.closed;
    const before = await this.databaseGeneration();
    if (stale()) return null;
    const derived = this.derivedDataFile(POINT_FILE);
    // Nowhere to keep it, or the database moved on since this store looked (the poll will see it).
    if (!derived || derived.key !== databaseKey(before)) return null;
    const [companies] = await this.read('company/stats');
    const [edges] = await this.read('edge/count');
    const total = { companies: int(companies?.companies), edges: int(edges?.edges) };
    let file = await openMatching(
      derived.file,
      derived.key,
      (c) => c.companies === total.companies && c.edges === total.edges,
      this.options.logger,
    );
    const written = !file;
    if (!file) {
      // One full read at a time: the walks' memory reads every company and relationship too. A saved
      // file (an import's, a start's before) is opened above without waiting for it.
      if (this.memoryRead?.generation === generation) await this.memoryRead.done;
      if (stale()) return null;
      // Dates come as epoch milliseconds and become dates again, as single reads give them.
      const copy = (name: keyof typeof POINT_DATES, add: (rows: Row[]) => void) =>
        this.exec.stream(this.query(name), {}, MEMORY_BATCH, (rows) => {
          if (stale()) throw new Error('the data changed while the point-read file was written');
          for (const r of rows)
            for (const c of POINT_DATES[name]) if (typeof r[c] === 'number') r[c] = new Date(r[c]);
          add(rows);
        });
      file = await writePointFile(derived.file, derived.key, total, async (writer) => {
        await copy('company/profiles-all', (rows) => writer.addCompanies(rows.map(toProfile)));
        await copy('edge/all', (rows) => writer.addEdges(rows.map(toEdge)));
        const after = await this.databaseGeneration();
        return !stale() && databaseKey(after) === derived.key;
      });
      // The data changed under the read (a file of another generation is closed by the holder).
      if (!file) return null;
    }
    this.options.logger?.info(
      { ...total, ms: Date.now() - started, file: derived.file },
      written ? 'point-read file written' : 'point-read file opened',
    );
    return file;
  }

  /**
   * The walks' memory of the data as this store last saw it, or null. Starts reading it when it is
   * kept and not read yet for this generation; `wait`: resolves when that read ends.
   */
  private async walksMemory(wait: boolean): Promise<HeldWalks | null> {
    if ((this.options.walkMemory ?? 'off') === 'off') return null;
    const generation = this.gen;
    if (this.memory?.generation === generation) return this.memory;
    this.memoryRead = oncePerGeneration(
      this.memoryRead,
      generation,
      () => this.gen,
      (g) => this.readWalksMemory(g),
      (err, g) => {
        // The store closed under the read: nothing to report.
        if (!this.closed)
          this.options.logger?.warn(
            { err, generation: g },
            'tier walks by frontier queries: the relationships could not be held in memory',
          );
      },
    );
    return wait ? this.memoryRead.done : null;
  }

  /**
   * Reads every company and relationship into a WalkMemory: companies get offsets in the order they
   * are read, relationships name theirs by vid. Kept only when the database's generation is the same
   * before and after the read and the counts match, so a read that an import ran through is dropped.
   */
  private async readWalksMemory(generation: number): Promise<HeldWalks | null> {
    const started = Date.now();
    const stale = () => this.gen !== generation || this.closed;
    const before = await this.databaseGeneration();
    const [companies] = await this.read('company/stats');
    const [counted] = await this.read('relationship/count');
    const n = int(companies?.companies);
    const total = int(counted?.relationships);
    // Saved by this or another server for the same data: the file names its own vids.
    const derived = this.derivedDataFile(WALK_MEMORY_FILE);
    const saved = derived?.key === databaseKey(before) ? derived : null;
    if (saved) {
      const loaded = await WalkMemory.load(saved.file, saved.key, null).catch((err: unknown) => {
        this.options.logger?.warn({ err, file: saved.file }, 'saved walk memory unreadable; reading it anew');
        return null;
      });
      if (stale()) return null;
      if (loaded && loaded.relationships === total && loaded.companies === n) {
        this.memory = { generation, database: saved.key, walks: loaded };
        this.options.logger?.info(
          { relationships: total, ms: Date.now() - started, file: saved.file },
          'relationships held in memory for tier walks: loaded',
        );
        return this.memory;
      }
    }
    const vids = new Array<string>(n).fill('');
    const builder = new WalkMemoryBuilder(vids, total);
    let next = 0;
    await this.exec.stream(this.query('tierview/memory-companies'), {}, MEMORY_BATCH, (rows) => {
      if (stale()) throw new Error("the data changed while the walks' memory was read");
      for (const r of rows) {
        if (next >= n) throw new NotHeldExactly('the companies read are not those counted');
        vids[next] = str(r.vid) ?? '';
        r.off = next++;
      }
      builder.addCompanies(rows);
    });
    // Every vid once: a repeated one would name the first company's offset.
    if (next !== n || vids.some((vid, o) => builder.offsetOf(vid) !== o))
      throw new NotHeldExactly('the companies read are not those counted');
    await this.exec.stream(this.query('tierview/memory-relationships'), {}, MEMORY_BATCH, (rows) => {
      if (stale()) throw new Error("the data changed while the walks' memory was read");
      for (const r of rows) {
        r.s = builder.offsetOf(str(r.s) ?? '');
        r.c = builder.offsetOf(str(r.c) ?? '');
      }
      builder.addRelationships(rows);
    });
    const walks = builder.finish();
    if (walks.relationships !== total)
      throw new NotHeldExactly('the relationships read are not those counted');
    const [clusters] = await this.read('relationship/count-cluster');
    walks.keepClustersIf(int(clusters?.relationships), this.options.logger);
    const after = await this.databaseGeneration();
    if (stale() || after.generation !== before.generation || after.lineage !== before.lineage) return null;
    this.memory = { generation, database: databaseKey(before), walks };
    this.options.logger?.info(
      { relationships: total, mb: Math.round(walks.bytes / 1048576), ms: Date.now() - started },
      'relationships held in memory for tier walks',
    );
    if (saved)
      this.memorySave = walks.saveLogged(saved.file, saved.key, this.options.logger, { withVids: true });
    return this.memory;
  }

  /**
   * A file under `derivedDir` per server and database, keyed by the lineage and generation of
   * its data: every import and seed through tiergraph raises the generation, and a database
   * emptied and filled again starts another lineage (changes made to the database by other
   * means are not seen, as for the caches).
   */
  derivedDataFile(name: string): { file: string; key: string } | null {
    const file = this.derivedPath(name);
    if (!file || this.lineage === null || this.seenGeneration === null) return null;
    return { file, key: databaseKey({ generation: this.seenGeneration, lineage: this.lineage }) };
  }

  /** The file under `derivedDir` of this server and database for `name`; null without a directory. */
  private derivedPath(name: string): string | null {
    const dir = this.options.derivedDir;
    if (!dir) return null;
    const where = createHash('sha256').update(`${this.options.uri}\n${this.options.database}`).digest('hex');
    return path.join(dir, `neo4j-${where.slice(0, 16)}.${name}`);
  }

  /**
   * Creates missing constraints and indexes (idempotent) and records the schema
   * version. Refuses a database that a newer build has migrated further.
   */
  async migrate(): Promise<{ statements: number; version: number }> {
    const [meta] = await this.read('graph/generation');
    const current = meta ? int(meta.schema_version) : 0;
    if (current > NEO4J_SCHEMA_VERSION) {
      throw new Error(
        `the Neo4j database has schema version ${current}, newer than this build's ${NEO4J_SCHEMA_VERSION}; upgrade tiergraph`,
      );
    }
    const statements = splitStatements(readScript('schema/create'));
    for (const s of statements) await this.exec.autoCommit('schema/create', s);
    await this.exec.autoCommit('schema/await-indexes', 'CALL db.awaitIndexes(600)');
    await this.exec.write(this.query('graph/set-schema-version'), { version: NEO4J_SCHEMA_VERSION });
    return { statements: statements.length, version: NEO4J_SCHEMA_VERSION };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.memory = null;
    await this.points.close();
    await this.memorySave;
    await this.driver.close();
  }

  /** Every import and seed raises the database's generation, which a new database lacks. */
  get pristine(): boolean {
    return !this.seenGeneration;
  }

  async reachable(): Promise<void> {
    await this.databaseGeneration();
  }

  private async databaseGeneration(): Promise<{ generation: number; lineage: string | null }> {
    const [row] = await this.read('graph/generation');
    return { generation: row ? int(row.generation) : 0, lineage: str(row?.lineage) };
  }

  /** Records a change of the data for every instance (and this one). */
  private async changed(): Promise<void> {
    const [row] = await this.exec.write(this.query('graph/bump-generation'));
    this.seenGeneration = row ? int(row.generation) : null;
    this.lineage = str(row?.lineage);
    this.gen++;
    this.dataChanged();
  }

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
    if (vids.length === 0) return [];
    await this.points.ready();
    const file = this.points.file;
    // A profile holds its row's core fields already mapped, which the mapper keeps as they are.
    if (file) return file.companies(vids).map((p) => toCompanyCore(p as unknown as Props));
    const rows = await this.read('company/get-cores', { vids: [...vids] });
    const byVid = new Map(rows.map((r) => [str(r.vid) ?? '', r]));
    return vids.flatMap((vid) => {
      const row = byVid.get(vid);
      return row ? [toCompanyCore(row)] : [];
    });
  }

  async getClusterParent(vid: string): Promise<string | null> {
    const held = await this.walksMemory(this.options.walkMemory === 'wait');
    const parent = held?.walks.clusterParentOf(vid);
    return parent !== undefined ? parent : this.reads.getClusterParent(vid);
  }

  async listClusterMembers(
    cidId: string,
    page: { limit: number; offset: number },
  ): Promise<Page<ClusterMember>> {
    const held = (await this.walksMemory(this.options.walkMemory === 'wait'))?.walks.clusterMembersPage(
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
    // Lists come from the walks' memory of the generation this store has seen, once it is held
    // (cluster lists when it holds clusters).
    const held = await this.walksMemory(this.options.walkMemory === 'wait');
    let rows = held?.walks.listPage(vid, direction, grouping, { ...query, count: query.limit + 1 });
    if (rows) {
      for (const r of rows) r.counterpart_vid = held!.walks.vidAt(int(r.counterpart_offset));
    } else if (grouping === 'cluster') {
      rows = await engineClusterRows((name, params) => this.read(name, params), vid, direction, query);
    } else {
      const { name, params } = relationshipListQuery(vid, direction, grouping, query);
      rows = await this.read(name, params);
    }
    await this.points.ready();
    const page = rows.slice(0, query.limit);
    const vids = page.map((r) => str(r.counterpart_vid) ?? '');
    const known = vids.map((v) => counterparts?.(v) ?? null);
    const file = this.points.file;
    if (file)
      for (let i = 0; i < vids.length; i++) {
        const profile = known[i] ? null : file.company(vids[i]!);
        // A profile holds its row's summary fields already mapped, which the mapper keeps as they are.
        if (profile) known[i] = toSummary(profile as unknown as Props);
      }
    const unknown = [...new Set(vids.filter((_, i) => !known[i]))];
    const summaries = unknown.length === 0 ? [] : await this.read('company/get-summaries', { vids: unknown });
    const byVid = new Map<string, Props>(summaries.map((s) => [str(s.vid) ?? '', s]));
    const items = page.map((r, i) =>
      withCounterpart(r, known[i] ?? toSummary(byVid.get(vids[i]!) ?? { vid: vids[i] }), grouping),
    );
    return { items, hasMore: rows.length > query.limit };
  }

  async getEdge(edgeId: string): Promise<EdgeRecord | null> {
    await this.points.ready();
    const file = this.points.file;
    if (file) {
      return file.edge(edgeId);
    }
    return this.reads.getEdge(edgeId);
  }

  /**
   * From the walks' memory when it holds the database's current generation (one small read to check:
   * an import by another instance is seen at once, not at the next poll). Otherwise breadth-first,
   * one frontier step per tier (`tierview/step-*`, the query the embedded engine uses for the root).
   * A first pass gives every company its tier (the sink wants all companies before any relationship);
   * a second pass asks the same steps again and keeps the relationships that reach the next tier.
   */
  async walkTiers(request: TierWalkRequest, sink: TierWalkSink, signal?: AbortSignal): Promise<boolean> {
    const [rootRow] = await this.read('company/get-profile', { vid: request.root });
    if (!rootRow) return false;
    const held = await this.walksMemory(this.options.walkMemory === 'wait');
    const rootOffset = held ? held.walks.offsetOf(request.root) : -1;
    if (held && rootOffset >= 0 && databaseKey(await this.databaseGeneration()) === held.database) {
      const root = toTierCompany(rootRow, 0);
      await held.walks.walk({ ...request, root, rootOffset }, sink, signal);
      return true;
    }
    const step = this.query(`tierview/step-${request.direction}`);
    const spellings = request.countries
      ? domicileSpellings(
          (await this.read('tierview/domiciles')).map((r) => r.country),
          request.countries,
        )
      : null;
    const params = stepParams(request, spellings);
    await walkBySteps(
      toTierCompany(rootRow, 0),
      request,
      sink,
      async (vids, onRows) => {
        for (let i = 0; i < vids.length; i += FRONTIER_CHUNK) {
          signal?.throwIfAborted();
          await this.exec.stream(
            step,
            { ...params, vids: vids.slice(i, i + FRONTIER_CHUNK) },
            WALK_BATCH,
            onRows,
          );
        }
      },
      signal,
    );
    return true;
  }

  async pathSteps(vids: readonly string[], direction: PathStepDirection): Promise<PathStep[]> {
    if (vids.length === 0) return [];
    // As plain lists: from the walks' memory of the generation this store has seen, once it is held.
    const held = await this.walksMemory(this.options.walkMemory === 'wait');
    if (held) return held.walks.pathSteps(vids, direction);
    const rows = await this.exec.read(this.query(`path/step-${direction}`), { vids: [...vids] });
    return rows.map(toPathStep);
  }

  async scanSearchRows(onBatch: (rows: SearchRow[]) => void | Promise<void>): Promise<void> {
    await this.exec.stream(this.query('search/scan-companies'), {}, 20_000, (rows) =>
      onBatch(rows.map(toSearchRow)),
    );
  }

  /**
   * Upserts the staged graph in batched transactions and prunes what the staging
   * files no longer hold. Unlike the embedded engine, Neo4j is changed in place:
   * readers see the new data arrive table by table.
   */
  async replaceAll(
    stagingDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
    alongside?: LoadAlongside,
  ): Promise<void> {
    const upserts = {
      Company: this.query('import/upsert-companies'),
      Edge: this.query('import/upsert-edges'),
      SUPPLIES: this.query('import/upsert-supplies'),
      CLUSTER_SUPPLIES: this.query('import/upsert-cluster-supplies'),
    };
    const work = this.derivedWork(alongside);
    const next = work ? await this.nextDerived() : null;
    await this.besideLoad(work, next, stagingDir, async () => {
      const result = await importIntoNeo4j(this.exec, upserts, readScript('import/prune'), stagingDir, {
        batchSize: this.options.importBatchSize,
        parallel: this.options.importParallel,
        onProgress,
      });
      this.options.logger?.info({ importId: result.importId, rows: result.rows }, 'Neo4j import done');
    });
    if (!next) return this.changed();
    // In place just before the generation is raised, so that a server that notices the change finds
    // them, and the old data's files replaced only once the new data is complete; not when another
    // change raised the generation meanwhile, as their key would then name other data.
    const now = await this.databaseGeneration();
    if (now.generation + 1 === next.generation && now.lineage === next.lineage) next.adopt();
    else {
      next.discard();
      this.options.logger?.warn(
        { generation: now.generation },
        'another change raised the generation during the import: the servers derive its data afresh',
      );
    }
    await this.changed();
  }

  /**
   * Where the derived files of the data an import is loading are written, and the key they carry:
   * the database's key once the import has raised the generation. Null without a derived directory
   * or a lineage.
   */
  private async nextDerived(): Promise<(PendingDerived & { generation: number; lineage: string }) | null> {
    if (!this.options.derivedDir) return null;
    const { generation: now, lineage } = await this.databaseGeneration();
    // The lineage is drawn when the database is migrated (on opening): none, no key to foretell.
    if (lineage === null) return null;
    const generation = now + 1;
    return { ...this.pendingDerived(databaseKey({ generation, lineage })), generation, lineage };
  }

  /**
   * Derived files written for data this database will hold under `key`. Each is written beside the
   * file it replaces (`.import`), since a server keeps one file per database for whatever generation
   * it serves; `adopt` moves them in place, `discard` removes them.
   */
  private pendingDerived(key: string): PendingDerived {
    const written = new Set<string>();
    return {
      fileOf: (name) => {
        const file = this.derivedPath(name)!;
        written.add(file);
        return { file: `${file}${IMPORTED_SUFFIX}`, key };
      },
      adopt: () => {
        const adopted: string[] = [];
        for (const file of written) {
          const pending = `${file}${IMPORTED_SUFFIX}`;
          if (!fs.existsSync(pending)) continue;
          try {
            moveDerivedFile(pending, file);
            adopted.push(file);
          } catch (err) {
            // The data is in: the servers derive what could not be put in place.
            this.options.logger?.warn({ err, file }, 'could not put the derived data of the import in place');
            removeDerivedFile(pending);
          }
        }
        return adopted;
      },
      discard: () => {
        for (const file of written) removeDerivedFile(`${file}${IMPORTED_SUFFIX}`);
      },
    };
  }

  /**
   * Writes the files of Neo4j's offline bulk loader for a first load of the staged data
   * (neo4j-admin-files.ts) and, beside them, what a server on this database and derived directory
   * would otherwise read back from the loaded database before it serves at full speed: the search
   * index (`alongside`, the import's) and the point-read file (with `pointFileAtImport`). They carry
   * the key the loaded database will have, the files' generation under the lineage drawn here, so
   * a server takes them once, and only once, the database holds this load; a database loaded from
   * other files never matches it. Opens no connection. Answers the files written and the derived
   * files put in place.
   */
  async writeBulkLoadFiles(
    stagingDir: string,
    outDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
    alongside?: LoadAlongside,
  ): Promise<AdminFilesResult & { derived: string[] }> {
    const lineage = randomUUID();
    const work = this.derivedWork(alongside);
    const pending =
      work && this.options.derivedDir
        ? this.pendingDerived(databaseKey({ generation: ADMIN_FILES_GENERATION, lineage }))
        : null;
    const result = await this.besideLoad(work, pending, stagingDir, () =>
      writeNeo4jAdminFiles(stagingDir, outDir, onProgress, lineage),
    );
    return { ...result, derived: pending ? pending.adopt() : [] };
  }

  /**
   * What an import derives from its staging files beside the load: `alongside` (the search index)
   * and, with `pointFileAtImport`, the point-read file, which holds the edges too, under the data's
   * own key (see writePoints).
   */
  private derivedWork(alongside: LoadAlongside | undefined): LoadAlongside | undefined {
    return together(
      alongside,
      this.options.pointFileAtImport
        ? pointFileAlongside(POINT_FILE, (key) => key, true, this.options.logger)
        : undefined,
    );
  }

  /**
   * Runs `load` with `work` beside it, writing into `pending`'s files (no work without them): both
   * end before this does. A failed load stops the work and removes what it wrote; the work's own
   * failure is only logged (runLoadAlongside), the servers derive that data later.
   */
  private async besideLoad<T>(
    work: LoadAlongside | undefined,
    pending: PendingDerived | null,
    stagingDir: string,
    load: () => Promise<T>,
  ): Promise<T> {
    const failed = new AbortController();
    const besides = pending
      ? runLoadAlongside(work, stagingDir, pending.fileOf, failed.signal, this.options.logger)
      : Promise.resolve();
    try {
      const result = await load();
      await besides;
      return result;
    } catch (e) {
      failed.abort();
      await besides;
      pending?.discard();
      throw e;
    }
  }

  /** Notices imports and seeds made by other processes (or instances) and bumps the local generation. */
  followExternalImports(intervalMs = this.options.generationPollMs): () => void {
    const timer = setInterval(() => {
      this.databaseGeneration().then(
        ({ generation: g, lineage }) => {
          // A database emptied and filled again may reach the same generation under another lineage.
          if (this.seenGeneration !== null && (g !== this.seenGeneration || lineage !== this.lineage)) {
            this.gen++;
            this.dataChanged();
            this.options.logger?.info({ generation: g }, 'graph changed by another process');
          }
          this.seenGeneration = g;
          this.lineage = lineage;
        },
        (err: unknown) => this.options.logger?.warn({ err }, 'could not read the graph generation'),
      );
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Runs seed statements, written for the embedded engine's dialect or portable, each
   * auto-committed and never retried: a seed's CREATE is not idempotent.
   */
  async runScript(statements: readonly string[]): Promise<number> {
    let n = 0;
    for (const s of statements) {
      await this.exec.autoCommit('seed', toNeo4jDialect(s), {}, { once: true });
      n++;
    }
    await this.changed();
    return n;
  }
}

/** Derived files being written for data a database is to hold (see pendingDerived). */
interface PendingDerived {
  fileOf: DerivedFileOf;
  /** Moves them in place; answers those it moved. */
  adopt: () => string[];
  discard: () => void;
}

/** The database's generation as a key: of saved derived data, and of the walks' memory. */
function databaseKey(g: { generation: number; lineage: string | null }): string {
  return `${g.lineage ?? ''}#${g.generation}`;
}

/** The text of a Neo4j script (`cypher/<name>.neo4j.cypher`). */
function readScript(name: (typeof NEO4J_SCRIPTS)[number]): string {
  return fs.readFileSync(path.join(cypherRoot(), `${name}.neo4j.cypher`), 'utf8');
}

/**
 * Why the store could not open, naming the setting to look at: the driver's own message names none
 * (a refused login reads "The client is unauthorized due to authentication failure.").
 */
export function openFailure(o: Pick<Neo4jStoreOptions, 'uri' | 'user' | 'database'>, e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const message = (e as Error).message?.split('\n')[0] ?? String(e);
  const where = withoutCredentials(o.uri);
  if (code === 'Neo.ClientError.Security.Unauthorized')
    return `Neo4j at ${where} refused the login of user "${o.user}": check NEO4J_USER and NEO4J_PASSWORD`;
  if (code === 'Neo.ClientError.Database.DatabaseNotFound')
    return `Neo4j at ${where} has no database "${o.database}": create it, or set NEO4J_DATABASE to one it has`;
  if (code === 'ServiceUnavailable' || code === 'SessionExpired')
    return `Neo4j does not answer at ${where} (NEO4J_URI): ${message}`;
  return `Neo4j at ${where} (NEO4J_URI) could not be opened: ${message}`;
}

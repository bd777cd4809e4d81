import type { DerivedState } from './derived-state';
import type {
  CompanyCore,
  CompanyProfile,
  CompanySummary,
  Direction,
  EdgeRecord,
  RelationshipItem,
} from '../domain/model';
import type { SearchRow } from '../domain/search-row';
import type { TierCompany, TierRelationship } from '../domain/tier-walk';

/** Where a file derived from one state of the data goes, and the key it is saved under (see derivedDataFile). */
export type DerivedFileOf = (name: string) => { file: string; key: string };

/**
 * Work done while a store loads an import's staging files, for the data being loaded (the search
 * index, from the same staging): told where that data's derived files go, and aborted when the load
 * fails. A failure of its own is the store's to report; the load goes on without it.
 */
export type LoadAlongside = (
  stagingDir: string,
  derivedFile: DerivedFileOf,
  signal: AbortSignal,
) => Promise<void>;

/** A company of a cluster, as a cluster's member list shows it. */
export interface ClusterMember {
  vid: string;
  name: string;
  country: string | null;
  is_cluster_parent: boolean;
}

/** Filters and page of a relationship list. */
export interface RelationshipQuery {
  /** Only relationships at or above this confidence. */
  minConfidence: number;
  /** Only relationships whose latest evidence is at or after this instant; null: no date filter. */
  evidenceFrom: Date | null;
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** A tier walk: every company within `tiers` steps of `root`, towards suppliers or customers. */
export interface TierWalkRequest {
  root: string;
  direction: Direction;
  /** 1 to 20; validated before it reaches the store (it becomes a literal bound of the walk). */
  tiers: number;
  /** Only relationships whose latest evidence is on or after this day (`YYYY-MM-DD`) are walked; null: all. */
  evidenceFrom: string | null;
  /** Only relationships with at least this confidence (none counts as 0) are walked; null or absent: all. */
  minConfidence?: number | null;
  /**
   * Only companies domiciled in these ISO 3166 alpha-2 codes are walked into (the
   * root always is); a company of unknown country is left out. Null or absent: all.
   */
  countries?: readonly string[] | null;
  /** Per tier, keep this many companies, those reached through the strongest relationships; null or absent: all. */
  maxCompaniesPerTier?: number | null;
  /**
   * Whether the sink uses the companies' details (country, websites, listing, industry,
   * relationship counts). When false, a store may leave them empty (null, [] or 0) and
   * read only what every export row names: vid, tier, name, legal name and cid.
   * Absent: true.
   */
  companyDetails?: boolean;
}

/** Receives a walk's results; the store awaits each call, so a slow writer slows the walk instead of piling up rows. */
export interface TierWalkSink {
  /** Every company of the walk, the root included (tier 0), before any relationship. */
  companies(batch: TierCompany[]): void | Promise<void>;
  /** Relationships of `tier` to `tier + 1`, in batches, tier by tier. */
  relationships(tier: number, batch: TierRelationship[]): void | Promise<void>;
  /** How many companies `tier` lost to the per-tier cap; called only when it lost some. */
  dropped?(tier: number, count: number): void | Promise<void>;
}

/** Which way a path-search step reads: relationships out of (`customers`) or into (`suppliers`) the frontier. */
export type PathStepDirection = 'customers' | 'suppliers';

/** One relationship read by a path-search step, from a frontier company to the company it reaches. */
export interface PathStep {
  /** The frontier company. */
  from: string;
  /** The company reached: a customer of `from` (step towards customers) or a supplier. */
  to: string;
  edge_id: string;
  confidence_score: number | null;
  latest_evidence_date: string | null;
  /** How many relationships `to` has in the same direction: what expanding it next would read. */
  toDegree: number;
}

/** One hop of a chain: a SUPPLIES relationship, supplier towards customer. */
export interface PathHop {
  edge_id: string;
  confidence_score: number | null;
  latest_evidence_date: string | null;
}

/** A chain from source to target: `vids` has one more entry than `hops`, source first. */
export interface StoreStats {
  companies: number;
  relationships: number;
}

/** A relationship list's counterpart by vid, from data already in hand; null when not there. */
export type CounterpartLookup = (vid: string) => CompanySummary | null;

/**
 * The port every graph engine adapter implements. Only adapters talk to a
 * database; services call these methods. Each method runs one named query
 * from `cypher/`.
 */
export interface GraphStore {
  readonly engine: 'embedded' | 'neo4j';
  /** Opens the store and creates the schema if it is missing (idempotent). */
  open(): Promise<void>;
  /**
   * Whether the store is as it was created, once open: no import has replaced its graph (and, on
   * Neo4j, no seed has run; an embedded seed leaves companies, which is as telling). Only such a
   * store gets the demo dataset; one emptied on purpose, by importing an empty dataset, is not.
   */
  readonly pristine: boolean;
  close(): Promise<void>;
  stats(): Promise<StoreStats>;
  getCompany(vid: string): Promise<CompanyProfile | null>;
  /** Companies in the order of `vids`; unknown vids are left out. */
  getCompanies(vids: readonly string[]): Promise<CompanyCore[]>;
  /** Parent of the cluster of `vid` (the company itself for a cluster of one); null when unknown. */
  getClusterParent(vid: string): Promise<string | null>;
  companyExists(vid: string): Promise<boolean>;
  /** Members of the cluster `cidId` (the parent first, then by name); empty when unknown. */
  listClusterMembers(cidId: string, page: { limit: number; offset: number }): Promise<Page<ClusterMember>>;
  /**
   * A page of a supplier or customer list. `counterparts`, when given, supplies the counterparts'
   * fields the caller already holds (the search index does); the store reads only those it returns
   * null for.
   */
  listRelationships(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    query: RelationshipQuery,
    counterparts?: CounterpartLookup,
  ): Promise<Page<RelationshipItem>>;
  getEdge(edgeId: string): Promise<EdgeRecord | null>;
  /**
   * Streams every company with its search keys, in batches, for the search index. A batch handler
   * that returns a promise is waited for before the next batch is read.
   */
  scanSearchRows(onBatch: (rows: SearchRow[]) => void | Promise<void>): Promise<void>;
  /**
   * Replaces the whole graph with the staging files in `stagingDir`. The old
   * graph keeps serving until the new one is complete; a failure leaves it as it was.
   * A store that knows where the new graph's derived data goes (see derivedDataFile) runs
   * `alongside` while it loads, and takes the new graph only once that has ended; others ignore it.
   */
  replaceAll(
    stagingDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
    alongside?: LoadAlongside,
  ): Promise<void>;
  /**
   * Follows imports that another process (the CLI) makes into the same data
   * directory, where the engine needs that; returns a function that stops it.
   */
  followExternalImports?(): () => void;
  /**
   * A server is up: the store may now prepare, in the background and again after every
   * data change, what it keeps for itself (the embedded store's relationships in memory
   * for tier walks). Optional; stores that keep nothing leave it out.
   */
  prepare?(): void;
  /** What the store keeps derived from the graph, by name, and where each stands (the server's /readyz). */
  derivedData?(): Record<string, DerivedState>;
  /**
   * Resolves once the database server behind the store has answered a query; for a store with a
   * server of its own (Neo4j), which /readyz asks. An in-process store has none to lose.
   */
  reachable?(): Promise<void>;
  /**
   * Walks the graph from `request.root`: a company's tier is its shortest distance
   * from the root over relationships that pass the evidence filter. Reports the
   * companies, then every relationship between consecutive tiers. Returns false
   * when the root is unknown. `signal` stops the walk between queries.
   */
  walkTiers(request: TierWalkRequest, sink: TierWalkSink, signal?: AbortSignal): Promise<boolean>;
  /**
   * One step of a path search: every SUPPLIES relationship out of (`customers`) or into
   * (`suppliers`) the companies of `vids`, in no particular order. Unknown vids read nothing.
   */
  pathSteps(vids: readonly string[], direction: PathStepDirection): Promise<PathStep[]>;
  /**
   * Where data derived from the graph (`name`: the search index) may be saved to be reused after a
   * restart, and the key the saved copy must carry: both change with every import and seed, so a copy
   * under another key is stale. Absent, or null, when the store cannot tell: derive afresh each time.
   */
  derivedDataFile?(name: string): { file: string; key: string } | null;
  /** Runs Cypher statements (seed files); returns how many ran. */
  runScript(statements: readonly string[]): Promise<number>;
  /** Incremented whenever the data changes, so caches and the search index know to rebuild. */
  readonly generation: number;
}

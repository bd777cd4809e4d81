import type { CompanyCore, CompanyProfile, Direction, EdgeRecord, RelationshipItem } from '../domain/model';

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

/** One company as the search index needs it, streamed at index build time. */
export interface SearchRow {
  vid: string;
  name: string;
  /** Cluster parents and companies in a cluster of one are searched by default. */
  searchedByDefault: boolean;
  /** Relationships of the company (suppliers + customers): the tie-break of search order. */
  degree: number;
  country: string | null;
  /** Lower-cased hosts of the company's domains and websites. */
  hosts: string[];
  /** Cities of the company's addresses. */
  cities: string[];
  /** Values of the company's identifiers. */
  identifierValues: string[];
}

export interface StoreStats {
  companies: number;
  relationships: number;
}

/**
 * The port every graph engine adapter implements. Only adapters talk to a
 * database; services call these methods. Each method runs one named query
 * from `cypher/`.
 */
export interface GraphStore {
  readonly engine: 'embedded' | 'neo4j';
  /** Opens the store and creates the schema if it is missing (idempotent). */
  open(): Promise<void>;
  close(): Promise<void>;
  stats(): Promise<StoreStats>;
  getCompany(vid: string): Promise<CompanyProfile | null>;
  /** Companies in the order of `vids`; unknown vids are left out. */
  getCompanies(vids: readonly string[]): Promise<CompanyCore[]>;
  /** Parent of the cluster of `vid` (the company itself for a cluster of one); null when unknown. */
  getClusterParent(vid: string): Promise<string | null>;
  companyExists(vid: string): Promise<boolean>;
  listRelationships(
    vid: string,
    direction: Direction,
    grouping: 'company' | 'cluster',
    query: RelationshipQuery,
  ): Promise<Page<RelationshipItem>>;
  getEdge(edgeId: string): Promise<EdgeRecord | null>;
  /** Streams every company with its search keys, in batches, for the search index. */
  scanSearchRows(onBatch: (rows: SearchRow[]) => void): Promise<void>;
  /**
   * Replaces the whole graph with the staging files in `stagingDir`. The old
   * graph keeps serving until the new one is complete; a failure leaves it as it was.
   */
  replaceAll(
    stagingDir: string,
    onProgress?: (table: string, done: number, total: number) => void,
  ): Promise<void>;
  /**
   * Follows imports that another process (the CLI) makes into the same data
   * directory, where the engine needs that; returns a function that stops it.
   */
  followExternalImports?(): () => void;
  /** Runs Cypher statements (seed files); returns how many ran. */
  runScript(statements: readonly string[]): Promise<number>;
  /** Incremented whenever the data changes, so caches and the search index know to rebuild. */
  readonly generation: number;
}

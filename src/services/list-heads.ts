import type { Logger } from '../logger';
import { isoOfTime, toSummary } from '../store/mappers';
import type { CompanySummary, Direction, RelationshipItem } from '../domain/model';
import type { LongList } from '../search/company-search';
import type { GraphStore, Page, RelationshipQuery } from '../store/graph-store';
import type { DerivedState } from '../store/derived-state';
import { PackedStrings } from '../store/packed-strings';
import { PAGE_DEFAULTS } from '../domain/params';

/**
 * Companies already in memory, as of the store's data now (the search index holds every company's
 * list fields): a list page takes its counterparts from here rather than reading each from the store.
 */
export interface KnownCompanies {
  has(vid: string): boolean;
  summary(vid: string): CompanySummary | null;
  /** Companies with at least `min` suppliers, and with at least `min` customers, with those counts. */
  longLists(min: number): Record<Direction, LongList[]>;
}

/** Lists at least this long have their head kept: shorter ones read fast enough from the store. */
export const LONG_LIST = 100;
/**
 * Lists kept at most, the longest first: 6,046 lists qualify at 1M companies. The cluster list of each
 * kept list's cluster is kept too: 12,076 heads in all, their ids packed in buffers (about 60 MB more
 * buffers and 5 MB more heap than the plain heads alone took). The cap bounds larger graphs.
 */
export const MAX_LISTS = 10_000;
/** Entries kept per long list: a page of the largest size from the top, and one more to tell if more follow. */
export const HEAD_ENTRIES = 101;
/**
 * Entries of each kept list whose counterparts are made when the heads are built: the first page at
 * the default page size, the page a list is first shown with. Made per request, the ten summaries of
 * a hub's first page (each a record found, sliced and parsed from the search index, and the garbage
 * it leaves) were about a fifth of the server's CPU for that page at 1M companies (bench/README.md).
 * Lists share them: the 12,076 lists kept at 1M hold 59,317 (about 30 MB of heap at some 600 bytes
 * each).
 */
const FIRST_PAGE = PAGE_DEFAULTS.limit;
/** Lists read at once while the heads are built (in the background, beside the requests). */
const BUILD_CONCURRENCY = 2;
/**
 * Longest the build keeps the thread before requests get a turn: lists read from the store's memory
 * never wait for I/O, and 12,000 of them take the thread for 5-10 s at 1M companies, at every start
 * and after every switch to an import. With slices of 10 ms, reads beside the build waited twice as
 * long at the 99th percentile (bench/README.md, 2026-12-02, night); the build takes some 20% longer.
 */
const BUILD_SLICE_MS = 3;

/**
 * A counterpart as a head keeps it: by vid alone, its other fields taken from KnownCompanies when a
 * page is served. Summaries made for the 600,000 kept entries at 1M companies, only to be dropped,
 * took half the build's time on the thread.
 */
function byVid(vid: string): CompanySummary {
  return toSummary({ vid });
}

/** A summary no request may change, since many share it (null stays null). */
function frozenSummary(summary: CompanySummary | null): CompanySummary | null {
  if (summary === null) return null;
  Object.freeze(summary.domains);
  return Object.freeze(summary);
}

/**
 * The kept entries of one list, column by column (about 90 bytes an entry rather than the 300 of an
 * item object; 6,000 lists at 1M companies). Counterparts' fields come from KnownCompanies when served.
 */
class Head {
  readonly counterparts: string[] = [];
  /** Relationship ids, packed outside the heap (12,000 lists of 101 entries at 1M companies). */
  readonly ids: PackedStrings;
  /**
   * edge_ids joined by commas (which no id holds), or null where they are just the relationship id
   * (always so outside clusters).
   */
  readonly edgeIds: PackedStrings;
  readonly types: string[][] = [];
  readonly confidence: Float64Array;
  /** latest_relationship_date as a time; NaN when there is none. */
  readonly latest: Float64Array;
  /** The date's text only where it is not the time's ISO form (never, for the engines' timestamps). */
  readonly latestText: (string | null)[] = [];
  /**
   * The counterparts of the first FIRST_PAGE entries, made once from KnownCompanies when the heads
   * are built (null for a company it did not know then): see FIRST_PAGE.
   */
  first: readonly (CompanySummary | null)[] = [];

  constructor(
    items: readonly RelationshipItem[],
    typeLists: Map<string, string[]>,
    private readonly type: 'edge' | 'cluster_edge',
  ) {
    this.confidence = new Float64Array(items.length);
    this.latest = new Float64Array(items.length);
    this.ids = PackedStrings.from(items.map((item) => item.relationship.relationship_id));
    this.edgeIds = PackedStrings.from(
      items.map(({ relationship: r }) =>
        r.edge_ids.length === 1 && r.edge_ids[0] === r.relationship_id ? null : r.edge_ids.join(','),
      ),
    );
    items.forEach((item, i) => {
      const r = item.relationship;
      this.counterparts.push(item.counterpart.vid);
      // Few distinct evidence type lists exist: share one array per list.
      const types = item.evidences.evidence_types;
      const key = types.join('\u0000');
      if (!typeLists.has(key)) typeLists.set(key, types);
      this.types.push(typeLists.get(key)!);
      this.confidence[i] = r.confidence_score;
      const text = r.latest_relationship_date;
      this.latest[i] = Date.parse(text ?? '');
      this.latestText.push(text !== null && isoOfTime(this.latest[i]) === text ? null : text);
    });
  }

  get length(): number {
    return this.ids.length;
  }

  /**
   * Makes the first page's counterparts once, frozen, since every request of that page shares them;
   * `made` holds those of the lists made before, which share them too.
   */
  keepFirst(known: KnownCompanies, made: Map<string, CompanySummary | null>): void {
    this.first = this.counterparts.slice(0, FIRST_PAGE).map((vid) => {
      let summary = made.get(vid);
      if (summary === undefined) made.set(vid, (summary = frozenSummary(known.summary(vid))));
      return summary;
    });
  }

  /** Entry i's counterpart: kept for the first page, else from `known`; null when unknown. */
  counterpart(i: number, known: KnownCompanies): CompanySummary | null {
    return this.first[i] ?? known.summary(this.counterparts[i]!);
  }

  item(i: number, counterpart: CompanySummary): RelationshipItem {
    const id = this.ids.get(i)!;
    const edgeIds = this.edgeIds.get(i);
    return {
      counterpart,
      relationship: {
        confidence_score: this.confidence[i]!,
        latest_relationship_date: this.latestText[i] ?? isoOfTime(this.latest[i]!),
        relationship_type: this.type,
        relationship_id: id,
        edge_ids: edgeIds === null ? [id] : edgeIds.split(','),
      },
      evidences: { evidence_types: [...this.types[i]!] },
    };
  }
}

const listKey = (grouping: 'company' | 'cluster', direction: Direction, vid: string) =>
  `${grouping}:${direction}:${vid}`;

interface Heads {
  generation: number;
  lists: Map<string, Head>;
}

/**
 * The first entries, in the default order, of every long supplier or customer list, and of the same
 * lists grouped by cluster (those of the long lists' cluster parents). The first page of a hub's list
 * costs the engine a read of all its relationships (about 2 ms for 15k at 1M companies), and a page
 * grouped by cluster a sum over them (5-15 ms from the store's memory for the longest); kept here, the
 * usual pages (the first ones, any confidence or date filter whose matches fall among the kept
 * entries) need no store read at all. Built in the background from the store's own list reads after the
 * search index (which names the long lists and holds the counterparts), again after every data change,
 * and used only while built from the data as it is now.
 */
export class ListHeads {
  private heads: Heads | null = null;
  private building: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly store: GraphStore,
    private readonly known: () => KnownCompanies | null,
    private readonly log?: Logger,
    private readonly sizes = { longList: LONG_LIST, headEntries: HEAD_ENTRIES, maxLists: MAX_LISTS },
  ) {}

  /**
   * The page of `vid`'s list asked for, when the kept head answers it exactly; null otherwise (no head,
   * heads of other data, a page beyond the head, or fewer matches in the head than the page needs).
   * `known` is what the caller took from the lookup the heads were made with, for this request.
   */
  page(
    vid: string,
    direction: Direction,
    query: RelationshipQuery,
    known: KnownCompanies | null,
    grouping: 'company' | 'cluster' = 'company',
  ): Page<RelationshipItem> | null {
    const heads = this.current(known !== null);
    if (!known || !heads) return null;
    const head = heads.lists.get(listKey(grouping, direction, vid));
    if (!head) return null;
    const want = query.offset + query.limit + 1;
    const from = query.evidenceFrom?.getTime() ?? null;
    const matches: number[] = [];
    for (let i = 0; i < head.length && matches.length < want; i++) {
      // Entries are by confidence, highest first: the first one below the minimum ends the matches.
      if (head.confidence[i]! < query.minConfidence) break;
      if (from !== null && !(head.latest[i]! >= from)) continue;
      matches.push(i);
    }
    // Fewer matches than wanted: those beyond the head may belong to the page, so the store must answer.
    if (matches.length < want) return null;
    const items: RelationshipItem[] = [];
    for (const i of matches.slice(query.offset, query.offset + query.limit)) {
      const counterpart = head.counterpart(i, known);
      if (!counterpart) return null;
      items.push(head.item(i, counterpart));
    }
    return { items, hasMore: true };
  }

  /** Where the heads of the data as it is now stand. */
  get state(): DerivedState {
    if (this.heads?.generation === this.store.generation) return 'ready';
    // Without a search index of the data as it is, the heads wait for it (they are built from it).
    return this.building || (!this.closed && this.known() === null) ? 'building' : 'unavailable';
  }

  /** Starts building the heads now, if they are not built for the data as it is and can be. */
  prepare(): void {
    this.current(this.known() !== null);
  }

  /** Resolves when a build under way (if any) has ended. */
  async settled(): Promise<void> {
    await this.building;
  }

  /** Stops a build under way (the store is about to close) and starts no other. */
  async close(): Promise<void> {
    this.closed = true;
    await this.building;
  }

  /** The heads if built from the data as it is now; starts a build when they are not and can be. */
  private current(indexFresh: boolean): Heads | null {
    const generation = this.store.generation;
    if (this.heads?.generation === generation) return this.heads;
    if (indexFresh && !this.building && !this.closed) {
      this.building = this.build(generation)
        .catch((err: unknown) => this.log?.warn({ err }, 'could not build the heads of long lists'))
        .finally(() => {
          this.building = null;
        });
    }
    return null;
  }

  private async build(generation: number): Promise<void> {
    const started = Date.now();
    const known = this.known();
    if (!known) return;
    const long = known.longLists(this.sizes.longList);
    const kept = [
      ...long.suppliers.map((l) => ({ ...l, direction: 'suppliers' as const })),
      ...long.customers.map((l) => ({ ...l, direction: 'customers' as const })),
    ]
      .sort((a, b) => b.length - a.length)
      .slice(0, this.sizes.maxLists);
    // Each long list, then the cluster list of its company's cluster (read from the cluster's parent).
    const todo = (['cluster', 'company'] as const).flatMap((grouping) =>
      kept.map((l) => ({ grouping, direction: l.direction, vid: l.vid })),
    );
    const lists = new Map<string, Head>();
    const typeLists = new Map<string, string[]>();
    const firstPages = new Map<string, CompanySummary | null>();
    const query = { minConfidence: 0, evidenceFrom: null, limit: this.sizes.headEntries, offset: 0 };
    let since = Date.now();
    const next = async (): Promise<void> => {
      for (let job = todo.pop(); job; job = todo.pop()) {
        if (this.closed || this.store.generation !== generation) return;
        const { grouping, direction } = job;
        const vid = grouping === 'company' ? job.vid : await this.store.getClusterParent(job.vid);
        if (vid === null || lists.has(listKey(grouping, direction, vid))) continue;
        // Every counterpart by vid, none read from the store: a head keeps only the vid, and a page
        // with a company the index lacks is left to the store when served (see page). Asking the index
        // for each of the 1.2M entries at 1M companies took about a tenth of the build's time.
        const page = await this.store.listRelationships(vid, direction, grouping, query, byVid);
        const head = new Head(page.items, typeLists, grouping === 'company' ? 'edge' : 'cluster_edge');
        head.keepFirst(known, firstPages);
        lists.set(listKey(grouping, direction, vid), head);
        if (Date.now() - since >= BUILD_SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          since = Date.now();
        }
      }
    };
    await Promise.all(Array.from({ length: BUILD_CONCURRENCY }, next));
    // The data changed while the lists were read: what was read may mix both; the next request rebuilds.
    if (this.closed || this.store.generation !== generation) return;
    this.heads = { generation, lists };
    this.log?.info(
      { lists: lists.size, firstPageCounterparts: firstPages.size, ms: Date.now() - started },
      'heads of long lists built',
    );
  }
}

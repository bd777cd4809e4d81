/**
 * The reads both graph-store adapters answer with the same query file and the
 * same mapper: only how a query is run differs (a pooled engine connection, a
 * driver session), so each adapter passes its runner in.
 */
import type { CompanyProfile, Direction, EdgeRecord } from '../domain/model';
import type { ClusterMember, Page, RelationshipQuery, StoreStats } from './graph-store';
import { bool, int, isDate, num, str, strings, toEdge, toProfile } from './mappers';
import type { Props } from './mappers';

/** A relationship list query: plain or by cluster, towards suppliers or customers. */
export type ListQueryName = `relationship/list-${Direction}` | `relationship/list-cluster-${Direction}`;

/** The queries a cluster list page reads from the engine (see engineClusterRows). */
export type ClusterListQueryName =
  `relationship/list-cluster-${Direction}` | `relationship/list-single-cluster-${Direction}`;

/** Queries whose text and answer are the same on every engine. */
export type PointQueryName =
  | 'company/stats'
  | 'relationship/count'
  | 'company/get-profile'
  | 'company/get-cluster-parent'
  | 'company/list-cluster-members'
  | 'company/exists'
  | 'edge/get';

export type RunQuery = (name: PointQueryName, params?: Record<string, unknown>) => Promise<Props[]>;

export class PointReads {
  constructor(private readonly run: RunQuery) {}

  async stats(): Promise<StoreStats> {
    const [c] = await this.run('company/stats');
    const [r] = await this.run('relationship/count');
    return { companies: int(c?.companies), relationships: int(r?.relationships) };
  }

  async getCompany(vid: string): Promise<CompanyProfile | null> {
    const [row] = await this.run('company/get-profile', { vid });
    return row ? toProfile(row) : null;
  }

  async getClusterParent(vid: string): Promise<string | null> {
    const [row] = await this.run('company/get-cluster-parent', { vid });
    return row ? (str(row.parent) ?? vid) : null;
  }

  async listClusterMembers(
    cidId: string,
    page: { limit: number; offset: number },
  ): Promise<Page<ClusterMember>> {
    const rows = await this.run('company/list-cluster-members', {
      cid_id: cidId,
      skip: page.offset,
      limit: page.limit + 1,
    });
    return {
      items: rows.slice(0, page.limit).map((r) => ({
        vid: str(r.vid) ?? '',
        name: str(r.name) ?? '',
        country: str(r.country),
        is_cluster_parent: bool(r.is_cluster_parent) ?? false,
      })),
      hasMore: rows.length > page.limit,
    };
  }

  async companyExists(vid: string): Promise<boolean> {
    return (await this.run('company/exists', { vid })).length > 0;
  }

  async getEdge(edgeId: string): Promise<EdgeRecord | null> {
    const [row] = await this.run('edge/get', { edge_id: edgeId });
    return row ? toEdge(row) : null;
  }
}

/** The query and parameters of one page of a relationship list, one row more than asked (is there a next page?). */
export function relationshipListQuery(
  vid: string,
  direction: Direction,
  grouping: 'company' | 'cluster',
  query: RelationshipQuery,
): { name: ListQueryName; params: Record<string, unknown> } {
  return {
    name:
      grouping === 'cluster' ? `relationship/list-cluster-${direction}` : `relationship/list-${direction}`,
    params: {
      [grouping === 'cluster' ? 'parent' : 'vid']: vid,
      min_confidence: query.minConfidence,
      any_date: query.evidenceFrom === null,
      evidence_from: query.evidenceFrom ?? new Date(0),
      skip: query.offset,
      limit: query.limit + 1,
    },
  };
}

/** Rows a stored cluster list is read up to when single-company pairs join it: all of them. */
const ALL_ROWS = 2 ** 31 - 1;

/**
 * The rows of one cluster list page read from the engine, one more than asked, in the list
 * query's columns: the stored cluster relationships, and those between two single-company clusters,
 * which the import does not store (stage/derive.ts). Those are summed up here from the two
 * companies' relationships as the import sums a stored one (the highest confidence, 0 at least; the
 * latest date; every evidence type; the sorted edge ids; the two cluster ids joined by `~`), then
 * filtered and ordered with the stored ones. A graph imported before stores them too: a stored row
 * a sum stands for is left out.
 */
export async function engineClusterRows(
  read: (name: ClusterListQueryName, params: Record<string, unknown>) => Promise<Props[]>,
  vid: string,
  direction: Direction,
  query: RelationshipQuery,
): Promise<Props[]> {
  const { name, params } = relationshipListQuery(vid, direction, 'cluster', query);
  const single = await read(`relationship/list-single-cluster-${direction}`, { parent: vid });
  // Only a single-company cluster has such pairs; the stored list pages itself.
  if (single.length === 0) return read(name as ClusterListQueryName, params);
  const sums = sumSinglePairs(single, direction);
  const from = query.evidenceFrom?.getTime() ?? null;
  const rows = (await read(name as ClusterListQueryName, { ...params, skip: 0, limit: ALL_ROWS })).filter(
    (r) => !sums.has(str(r.relationship_id) ?? ''),
  );
  for (const row of sums.values()) {
    const time = row.time;
    if (!(row.confidence_score >= query.minConfidence)) continue;
    if (from !== null && !(time >= from)) continue;
    rows.push({
      counterpart_vid: row.counterpart_vid,
      relationship_id: row.relationship_id,
      confidence_score: row.confidence_score,
      latest_relationship_date: Number.isNaN(time) ? null : new Date(time),
      evidence_types: [...row.types].sort(),
      edge_ids: row.edge_ids.sort(),
    });
  }
  rows.sort(
    (a, b) =>
      (num(b.confidence_score) ?? 0) - (num(a.confidence_score) ?? 0) ||
      byCodePoints(str(a.relationship_id) ?? '', str(b.relationship_id) ?? ''),
  );
  return rows.slice(query.offset, query.offset + query.limit + 1);
}

interface PairSum {
  counterpart_vid: string;
  relationship_id: string;
  confidence_score: number;
  time: number;
  types: Set<string>;
  edge_ids: string[];
}

/** The rows of list-single-cluster-* summed up per counterpart, by relationship id. */
function sumSinglePairs(rows: Props[], direction: Direction): Map<string, PairSum> {
  const sums = new Map<string, PairSum>();
  for (const r of rows) {
    const own = str(r.own_cid) ?? '';
    const other = str(r.counterpart_cid) ?? '';
    const id = direction === 'suppliers' ? `${other}~${own}` : `${own}~${other}`;
    let sum = sums.get(id);
    if (!sum) {
      sum = {
        counterpart_vid: str(r.counterpart_vid) ?? '',
        relationship_id: id,
        confidence_score: 0,
        time: NaN,
        types: new Set(),
        edge_ids: [],
      };
      sums.set(id, sum);
    }
    // As the import sums them: a missing confidence or date never wins.
    const confidence = num(r.confidence_score) ?? NaN;
    if (confidence > sum.confidence_score) sum.confidence_score = confidence;
    const date = r.latest_relationship_date;
    const time = isDate(date) ? date.getTime() : NaN;
    if (time > sum.time || (Number.isNaN(sum.time) && !Number.isNaN(time))) sum.time = time;
    for (const t of strings(r.evidence_types)) sum.types.add(t);
    sum.edge_ids.push(str(r.edge_id) ?? '');
  }
  return sums;
}

/**
 * Code point order, in which both engines sort text (the embedded engine compares UTF-8 bytes; Neo4j
 * 5.26 puts U+FF21 before U+20000 too): JavaScript's `<` but for a code point above U+FFFF (a
 * surrogate pair), which sorts after every other.
 */
export function byCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xHigh = x >= 0xd800 && x <= 0xdfff;
    const yHigh = y >= 0xd800 && y <= 0xdfff;
    return xHigh === yHigh ? x - y : xHigh ? 1 : -1;
  }
  return a.length - b.length;
}

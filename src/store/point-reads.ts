/**
 * The reads both graph-store adapters answer with the same query file and the
 * same mapper: only how a query is run differs (a pooled engine connection, a
 * driver session), so each adapter passes its runner in.
 */
import type { CompanyProfile, Direction, EdgeRecord } from '../domain/model';
import type { ClusterMember, Page, RelationshipQuery, StoreStats } from './graph-store';
import { bool, int, num, str, strings, toEdge, toProfile } from './mappers';
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

/**
 * The rows of one cluster list page read from the engine, one more than asked, in the list
 * query's columns: the stored cluster relationships, and those between two single-company clusters,
 * which the import does not store (stage/derive.ts) and the engine sums up from the two companies'
 * relationships (relationship/list-single-cluster-*). Each list's first offset + limit + 1 are
 * read and merged. A graph imported before stores such pairs too, as the same rows: a stored row a
 * sum stands for is left out (it ranks no higher in the stored list than in the sums, so a stored
 * row that is read has its sum read too).
 */
export async function engineClusterRows(
  read: (name: ClusterListQueryName, params: Record<string, unknown>) => Promise<Props[]>,
  vid: string,
  direction: Direction,
  query: RelationshipQuery,
): Promise<Props[]> {
  const { params } = relationshipListQuery(vid, direction, 'cluster', query);
  const wanted = query.offset + query.limit + 1;
  const { parent, min_confidence, any_date, evidence_from } = params;
  // Both at once: only a single-company cluster has sums, and then the stored list is short.
  const [sums, stored] = await Promise.all([
    read(`relationship/list-single-cluster-${direction}`, {
      parent,
      min_confidence,
      any_date,
      evidence_from,
      limit: wanted,
    }),
    read(`relationship/list-cluster-${direction}`, { ...params, skip: 0, limit: wanted }),
  ]);
  if (sums.length === 0) return stored.slice(query.offset, wanted);
  const summed = new Set(sums.map((r) => str(r.relationship_id)));
  const rows = stored.filter((r) => !summed.has(str(r.relationship_id)));
  for (const r of sums) {
    const lists = Array.isArray(r.evidence_lists) ? (r.evidence_lists as unknown[]) : [];
    rows.push({
      counterpart_vid: r.counterpart_vid,
      relationship_id: r.relationship_id,
      confidence_score: r.confidence_score,
      latest_relationship_date: r.latest_relationship_date,
      evidence_types: [...new Set(lists.flatMap((l) => strings(l)))].sort(),
      edge_ids: strings(r.edge_ids).sort(),
    });
  }
  rows.sort(
    (a, b) =>
      (num(b.confidence_score) ?? 0) - (num(a.confidence_score) ?? 0) ||
      byCodePoints(str(a.relationship_id) ?? '', str(b.relationship_id) ?? ''),
  );
  return rows.slice(query.offset, wanted);
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

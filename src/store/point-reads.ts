/**
 * The reads both graph-store adapters answer with the same query file and the
 * same mapper: only how a query is run differs (a pooled engine connection, a
 * driver session), so each adapter passes its runner in.
 */
import type { CompanyProfile, Direction, EdgeRecord } from '../domain/model';
import type { ClusterMember, Page, RelationshipQuery, StoreStats } from './graph-store';
import { bool, int, str, toEdge, toProfile } from './mappers';
import type { Props } from './mappers';

/** A relationship list query: plain or by cluster, towards suppliers or customers. */
export type ListQueryName = `relationship/list-${Direction}` | `relationship/list-cluster-${Direction}`;

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

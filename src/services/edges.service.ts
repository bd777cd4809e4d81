import { notFound } from '../domain/errors';
import type { EdgeRecord } from '../domain/model';
import type { GraphStore } from '../store/graph-store';
import type { ReadCache } from './read-cache';

/** Edge lookup with evidence. */
export class EdgesService {
  constructor(
    private readonly store: GraphStore,
    private readonly cache: ReadCache,
  ) {}

  async get(edgeId: string): Promise<EdgeRecord> {
    const edge = await this.cache.get(`edge:${edgeId}`, () => this.store.getEdge(edgeId));
    if (!edge) throw notFound('edge', edgeId);
    return edge;
  }
}

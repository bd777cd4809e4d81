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
    const read = () => this.store.getEdge(edgeId);
    const edge = await (this.store.readsFromFile('edge') ? read() : this.cache.get(`edge:${edgeId}`, read));
    if (!edge) throw notFound('edge', edgeId);
    return edge;
  }
}

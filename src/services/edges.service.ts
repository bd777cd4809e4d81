import { notFound } from '../domain/errors';
import type { EdgeRecord } from '../domain/model';
import type { GraphStore } from '../store/graph-store';

/** Edge lookup with evidence. */
export class EdgesService {
  constructor(private readonly store: GraphStore) {}

  async get(edgeId: string): Promise<EdgeRecord> {
    const edge = await this.store.getEdge(edgeId);
    if (!edge) throw notFound('edge', edgeId);
    return edge;
  }
}

import type { BlobStore } from '../../src/blobs/blob-store';
import { TierViewService } from '../../src/services/tierview.service';
import type { GraphStore } from '../../src/store/graph-store';

/**
 * The real export, slowed by `delayMs` before it starts, counting how often each
 * run is exported: slow exports make runs wait in the queue longer than a lock
 * lifetime, and the counts show a run exported twice.
 */
export class CountingExport extends TierViewService {
  readonly calls = new Map<number, number>();

  constructor(
    store: GraphStore,
    blobs: BlobStore,
    private readonly delayMs: number,
  ) {
    super(store, blobs);
  }

  override async export(
    ...args: Parameters<TierViewService['export']>
  ): ReturnType<TierViewService['export']> {
    const runId = args[0];
    this.calls.set(runId, (this.calls.get(runId) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, this.delayMs));
    return super.export(...args);
  }
}

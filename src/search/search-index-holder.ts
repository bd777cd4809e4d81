import type { Logger } from '../logger';
import type { GraphStore } from '../store/graph-store';
import { CompanySearchIndex } from './company-search';

/**
 * Holds the live search index and rebuilds it when the store's data changes
 * (after an import or a seed). Searches keep using the previous index while a
 * rebuild runs in the background (a 1M-company index takes seconds); only the
 * very first build is waited for. Concurrent callers share one rebuild.
 */
export class SearchIndexHolder {
  private current: CompanySearchIndex | null = null;
  private builtFor = -1;
  private building: Promise<CompanySearchIndex> | null = null;

  constructor(
    private readonly store: GraphStore,
    private readonly log?: Logger,
  ) {}

  async get(): Promise<CompanySearchIndex> {
    if (!this.current) return this.rebuild();
    if (this.builtFor !== this.store.generation && !this.building) {
      this.rebuild().catch((err: unknown) => this.log?.error({ err }, 'search index rebuild failed'));
    }
    return this.current;
  }

  /** Store generation the live index was built from (-1 before the first build). */
  get generation(): number {
    return this.builtFor;
  }

  /** Whether searches can be answered without waiting for a build. */
  get ready(): boolean {
    return this.current !== null;
  }

  rebuild(): Promise<CompanySearchIndex> {
    if (this.building) return this.building;
    const generation = this.store.generation;
    this.building = CompanySearchIndex.build(this.store, this.log)
      .then((index) => {
        this.current = index;
        this.builtFor = generation;
        return index;
      })
      .finally(() => {
        this.building = null;
      });
    return this.building;
  }
}

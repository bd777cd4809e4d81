import type { SearchRow } from '../../src/domain/search-row';
import type { GraphStore } from '../../src/store/graph-store';
import { SearchIndexHolder } from '../../src/search/search-index-holder';
import { buildSearchRow } from '../support/factories';

/** Just enough of a store for the index: its rows and its generation, and a gate to hold a scan. */
function fakeStore(names: string[]) {
  let release: () => void = () => undefined;
  const state = { generation: 1, names, gate: null as Promise<void> | null };
  const store = {
    get generation() {
      return state.generation;
    },
    async scanSearchRows(onBatch: (rows: SearchRow[]) => void) {
      if (state.gate) await state.gate;
      onBatch(state.names.map((name, i) => buildSearchRow(`v${i}`, name)));
    },
  } as unknown as GraphStore;
  const hold = () => {
    state.gate = new Promise<void>((r) => (release = r));
  };
  return { store, state, hold, release: () => release() };
}

const names = async (h: SearchIndexHolder, q: string) =>
  (await h.get())
    .search({ name: q, minSimilarity: 0.3, includeSubsidiaries: true, limit: 10, offset: 0 })
    .hits.map((x) => x.vid);

describe('SearchIndexHolder', () => {
  it('lends its index in place of store reads only while it matches the store data', async () => {
    const f = fakeStore(['Acme Steel']);
    const holder = new SearchIndexHolder(f.store);
    expect(holder.fresh()).toBeNull();
    await holder.get();
    expect(holder.fresh()?.summary('v0')?.name).toBe('Acme Steel');

    f.state.generation = 2;
    f.state.names = ['Bolt Castings'];
    f.hold();
    // The data changed: the old index must not stand in for the store, and a rebuild is under way.
    expect(holder.fresh()).toBeNull();
    f.release();
    await holder.rebuild();
    expect(holder.fresh()?.summary('v0')?.name).toBe('Bolt Castings');
  });

  it('waits for the first build only, then serves the old index while a new one builds', async () => {
    const f = fakeStore(['Acme Steel']);
    const holder = new SearchIndexHolder(f.store);
    expect(await names(holder, 'acme steel')).toEqual(['v0']);
    expect(holder.generation).toBe(1);

    f.state.generation = 2;
    f.state.names = ['Bolt Castings'];
    f.hold();
    // The store moved on, the rebuild is held: searches still answer from the old index at once.
    expect(await names(holder, 'acme steel')).toEqual(['v0']);
    expect(holder.generation).toBe(1);
    f.release();
    await holder.rebuild();
    expect(holder.generation).toBe(2);
    expect(await names(holder, 'bolt castings')).toEqual(['v0']);
    expect(await names(holder, 'acme steel')).toEqual([]);
  });
});

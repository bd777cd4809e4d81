import type { SearchRow } from '../../src/domain/search-row';
import type { GraphStore } from '../../src/store/graph-store';
import { AppError } from '../../src/domain/errors';
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

  it('refuses searches until its first index is built when asked to, with how far the build got', async () => {
    const f = fakeStore(['Acme Steel', 'Bolt Castings']);
    f.hold();
    const holder = new SearchIndexHolder(f.store, undefined, null, { refuseUntilBuilt: true });
    const criteria = { name: 'acme', minSimilarity: 0.3, includeSubsidiaries: true, limit: 10, offset: 0 };
    const refused = await holder.search(criteria).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'UNAVAILABLE', retryAfterS: 5 });
    expect((refused as AppError).message).toMatch(/being built \(0 companies read so far\)/);
    expect(holder.ready).toBe(false);
    f.release();
    await holder.rebuild();
    expect(holder.ready).toBe(true);
    expect((await holder.search(criteria)).hits.map((h) => h.vid)).toEqual(['v0']);
  });

  it('rebuilds for the data as it is when asked during a build of older data', async () => {
    const f = fakeStore(['Acme Steel']);
    f.hold();
    const holder = new SearchIndexHolder(f.store);
    const older = holder.rebuild();
    f.state.generation = 2;
    f.state.names = ['Bolt Castings'];
    const current = holder.rebuild();
    f.release();
    await older;
    const index = await current;
    expect(holder.generation).toBe(2);
    expect(index.summary('v0')?.name).toBe('Bolt Castings');
  });

  it('stops a build under way when closed, and builds no more', async () => {
    const f = fakeStore(['Acme Steel']);
    f.hold();
    const holder = new SearchIndexHolder(f.store);
    const building = holder.rebuild();
    const failed = building.then(
      () => null,
      (e: unknown) => e,
    );
    const closed = holder.close();
    f.release();
    await closed;
    expect(await failed).toMatchObject({ name: 'AbortError' });
    expect(holder.ready).toBe(false);
    await expect(holder.rebuild()).rejects.toThrow('closed');
  });
});

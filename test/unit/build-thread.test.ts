import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import workerThreads from 'node:worker_threads';
import type { SearchRow } from '../../src/domain/search-row';
import type * as BuildThreadModule from '../../src/search/build-thread';
import type * as HolderModule from '../../src/search/search-index-holder';
import type * as ThreadsModule from '../../src/search/search-threads';
import type { GraphStore } from '../../src/store/graph-store';
import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import { generateDataset } from '../../src/demo/generate';
import { stageImport } from '../../src/import/stage';
import { scanStagedSearchRows } from '../../src/store/staged-search-rows';
import { compiledDir, compiledModule } from '../support/compiled-sources';
import { buildKeyedSearchRow } from '../support/factories';
import { mayRaisePriority } from '../../src/search/thread-priority';
import { itRaisingPriority, threadNices } from '../support/thread-priority';

type BuildThread = typeof BuildThreadModule;
type Holders = typeof HolderModule;
type Threads = typeof ThreadsModule;

const WORDS = ['Acme', 'Bolt', 'Castings', 'Delta', 'Steel', 'Nordic', 'Pacific', 'Glass', 'Motors'];

/** 3,000 companies with every search key filled in some of them. */
function rows(): SearchRow[] {
  return Array.from({ length: 3000 }, (_, i) =>
    buildKeyedSearchRow(
      i,
      `${WORDS[i % 9]} ${WORDS[(i * 7 + 3) % 9]} ${i.toString(36)} GmbH`,
      `${WORDS[(i + 1) % 9]} Trading ${i}`,
      ['DE', 'Japan', null],
    ),
  );
}

/** A store that hands its rows over in batches of 200, waiting for each batch to be taken as a real one does. */
function store(all = rows(), between?: (batch: number) => Promise<void> | void) {
  const scans = { count: 0 };
  return {
    scans,
    store: {
      async scanSearchRows(onBatch: (rows: SearchRow[]) => void | Promise<void>) {
        scans.count++;
        for (let at = 0, batch = 0; at < all.length; at += 200, batch++) {
          await onBatch(all.slice(at, at + 200));
          await between?.(batch);
        }
      },
    },
  };
}

const CRITERIA: Partial<SearchCriteria>[] = [
  { name: 'acme steel' },
  { name: 'nordc glass' },
  { name: 'pacific trading' },
  { city: 'hamburg' },
  { identifier: 'LEI000042' },
  { industry: 'NAICS:331110', name: 'delta' },
];
const criteria = (c: Partial<SearchCriteria>): SearchCriteria => ({
  minSimilarity: 0.3,
  includeSubsidiaries: false,
  limit: 10,
  offset: 0,
  ...c,
});

describe('the search index built on a thread of its own', () => {
  const compiled = compiledDir('build-thread');
  const RealWorker = workerThreads.Worker;
  const workers: { file: string; worker: workerThreads.Worker }[] = [];
  let dir: string;
  let mod: BuildThread;
  beforeAll(() => {
    // Every worker started is noted, so that the tests know the thread ran.
    workerThreads.Worker = class extends RealWorker {
      constructor(file: string | URL, options?: workerThreads.WorkerOptions) {
        super(file, options);
        workers.push({ file: String(file), worker: this });
      }
    };
    mod = compiledModule<BuildThread>(compiled, 'search/build-thread');
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-build-thread-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterAll(() => {
    workerThreads.Worker = RealWorker;
    fs.rmSync(compiled, { recursive: true, force: true });
  });
  const buildThreads = () => workers.filter((w) => w.file.endsWith('build-worker.js'));

  it('is the index built here, byte for byte, and comes in shared memory', async () => {
    const before = buildThreads().length;
    const read: number[] = [];
    const built = await mod.buildSearchIndex(store().store, undefined, { onRows: (n) => read.push(n) });
    expect(buildThreads().length).toBe(before + 1);
    expect(built.shared).not.toBeNull();
    expect(read.reduce((a, b) => a + b, 0)).toBe(3000);
    const here = await CompanySearchIndex.build(store().store);
    await CompanySearchIndex.fromShared(built.shared!)!.save(path.join(dir, 'thread'), 'k');
    await here.save(path.join(dir, 'here'), 'k');
    expect(fs.readFileSync(path.join(dir, 'thread')).equals(fs.readFileSync(path.join(dir, 'here')))).toBe(
      true,
    );
    // Read on this thread from the shared arrays, it answers as the one built here.
    const shared = CompanySearchIndex.fromShared(built.shared!)!;
    for (const c of CRITERIA) expect(shared.search(criteria(c))).toEqual(here.search(criteria(c)));
  });

  /** The compiled CompanySearchIndex, the one build-thread reads an index with on this thread. */
  const compiledIndex = () =>
    compiledModule<{ CompanySearchIndex: typeof CompanySearchIndex }>(compiled, 'search/company-search')
      .CompanySearchIndex;

  it('saves the index from its thread when given a file, and reads it back, never copied from the thread', async () => {
    const fromShared = jest.spyOn(compiledIndex(), 'fromShared');
    try {
      const file = path.join(dir, 'thread');
      const built = await mod.buildSearchIndex(store().store, undefined, { saveTo: { file, key: 'k' } });
      // Copied from the thread, the index was in memory twice until the thread ended.
      expect(fromShared).not.toHaveBeenCalled();
      expect(built.saved).toBe(true);
      expect(built.shared).not.toBeNull();
      const { worker } = buildThreads().at(-1)!;
      expect(worker.threadId).toBe(-1);
      const here = await CompanySearchIndex.build(store().store);
      await here.save(path.join(dir, 'here'), 'k');
      expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'here')))).toBe(true);
      const shared = CompanySearchIndex.fromShared(built.shared!)!;
      for (const c of CRITERIA) {
        expect(built.index.search(criteria(c))).toEqual(here.search(criteria(c)));
        expect(shared.search(criteria(c))).toEqual(here.search(criteria(c)));
      }
    } finally {
      fromShared.mockRestore();
    }
  });

  it('hands the index over all the same, and says why, when its thread cannot save it', async () => {
    // A file where its directory should be: the save fails.
    fs.writeFileSync(path.join(dir, 'plain'), '');
    const file = path.join(dir, 'plain', 'index');
    const { store: s, scans } = store();
    const warned: string[] = [];
    const log = { warn: (_: unknown, msg: string) => warned.push(msg), info: () => undefined };
    const built = await mod.buildSearchIndex(s, log as never, { saveTo: { file, key: 'k' } });
    expect(built.saved).toBe(false);
    expect(built.index.size).toBe(3000);
    expect(CompanySearchIndex.fromShared(built.shared!)!.size).toBe(3000);
    expect(warned).toEqual(['could not save the search index']);
    // Not built a second time.
    expect(scans.count).toBe(1);
  });

  it("saves an import's index from the thread that built it, nothing of it coming to this one", async () => {
    const fromShared = jest.spyOn(compiledIndex(), 'fromShared');
    const loadShared = jest.spyOn(compiledIndex(), 'loadShared');
    try {
      const file = path.join(dir, 'import');
      const before = buildThreads().length;
      expect(await mod.saveSearchIndex(store().store, undefined, { file, key: 'k' })).toEqual({
        companies: 3000,
      });
      expect(buildThreads().length).toBe(before + 1);
      expect(fromShared).not.toHaveBeenCalled();
      expect(loadShared).not.toHaveBeenCalled();
      const here = await CompanySearchIndex.build(store().store);
      await here.save(path.join(dir, 'here'), 'k');
      expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'here')))).toBe(true);
      // A save that fails is the caller's failure.
      fs.writeFileSync(path.join(dir, 'plain'), '');
      await expect(
        mod.saveSearchIndex(store().store, undefined, { file: path.join(dir, 'plain', 'x'), key: 'k' }),
      ).rejects.toThrow(/could not save the search index/);
    } finally {
      fromShared.mockRestore();
      loadShared.mockRestore();
    }
  });

  it('stops reading and ends the thread when the build is stopped', async () => {
    const stop = new AbortController();
    const { store: s, scans } = store(rows(), (batch) => {
      if (batch === 2) stop.abort(new Error('closing'));
    });
    await expect(mod.buildSearchIndex(s, undefined, { signal: stop.signal })).rejects.toThrow('closing');
    expect(scans.count).toBe(1);
    const { worker } = buildThreads().at(-1)!;
    // Terminated: a worker that has exited has no thread id.
    await new Promise<void>((resolve) =>
      worker.threadId === -1 ? resolve() : worker.once('exit', () => resolve()),
    );
    expect(worker.threadId).toBe(-1);
  });

  it('ends the thread when the build is stopped after the read, while the thread indexes', async () => {
    const stop = new AbortController();
    const all = rows();
    const s = {
      async scanSearchRows(onBatch: (rows: SearchRow[]) => void | Promise<void>) {
        for (let at = 0; at < all.length; at += 200) await onBatch(all.slice(at, at + 200));
        // Stopped once every row is read: the thread is building by then.
        setTimeout(() => stop.abort(new Error('closing')), 0);
      },
    };
    const before = buildThreads().length;
    await expect(mod.buildSearchIndex(s, undefined, { signal: stop.signal })).rejects.toThrow('closing');
    expect(buildThreads().length).toBe(before + 1);
    const { worker } = buildThreads().at(-1)!;
    await new Promise<void>((resolve) =>
      worker.threadId === -1 ? resolve() : worker.once('exit', () => resolve()),
    );
    expect(worker.threadId).toBe(-1);
  });

  it('is built here instead when the thread fails, from a second read of the store', async () => {
    // A row the thread cannot be sent (a function is not cloneable) fails the hand-over.
    const all = rows();
    (all[2500] as unknown as { extra: () => void }).extra = () => undefined;
    const { store: s, scans } = store(all);
    const warned: string[] = [];
    const log = { warn: (_: unknown, msg: string) => warned.push(msg), info: () => undefined };
    const read: number[] = [];
    const built = await mod.buildSearchIndex(s, log as never, { onRows: (n) => read.push(n) });
    expect(built.shared).toBeNull();
    expect(built.index.size).toBe(3000);
    expect(scans.count).toBe(2);
    expect(warned).toEqual(['search index build thread failed; building on the main thread instead']);
    // What the failed attempt counted is taken back: the count ends at the companies read.
    expect(read.reduce((a, b) => a + b, 0)).toBe(3000);
  });

  const mayRaise = mayRaisePriority();
  /** The nice values of this process's threads other than 0. */
  const niceThreads = () => threadNices().filter((n) => n !== 0);
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    return what();
  };

  it("builds an import's index from its staged lines and counts, as from its staging file", async () => {
    const input = path.join(dir, 'dataset');
    await generateDataset({ companies: 400, seed: 3, outDir: input });
    const before = buildThreads().length;
    const fed = await mod.feedSearchIndex();
    if (!mayRaise) {
      // The thread could not give way: the index is left to the load, and the thread ended.
      expect(fed).toBeNull();
      return;
    }
    const staging = path.join(dir, 'staging');
    await stageImport(input, staging, { companies: fed! });
    // Saved by the thread that built it: nothing of the index comes to this thread.
    const compiledIndex = compiledModule<{ CompanySearchIndex: typeof CompanySearchIndex }>(
      compiled,
      'search/company-search',
    ).CompanySearchIndex;
    const shared = jest.spyOn(compiledIndex, 'fromShared');
    const saved = await fed!.save(path.join(dir, 'fed'), 'k');
    expect(shared).not.toHaveBeenCalled();
    expect(saved).toEqual({ companies: 400 });
    expect(buildThreads().length).toBe(before + 1);
    const fromFile = await CompanySearchIndex.build({
      scanSearchRows: (onBatch) => scanStagedSearchRows(staging, onBatch, 64),
    });
    await fromFile.save(path.join(dir, 'file'), 'k');
    expect(fs.readFileSync(path.join(dir, 'fed')).equals(fs.readFileSync(path.join(dir, 'file')))).toBe(true);
    // Saved once: the build is over.
    await expect(fed!.save(path.join(dir, 'again'), 'k')).rejects.toThrow(/saved once already/);
    expect(fs.existsSync(path.join(dir, 'again'))).toBe(false);
    // The thread ended once the index was saved.
    const { worker } = buildThreads().at(-1)!;
    expect(await until(() => worker.threadId === -1)).toBe(true);
  });

  itRaisingPriority(mayRaise, 'takes only the time the staging leaves until every file is read', async () => {
    const input = path.join(dir, 'dataset');
    await generateDataset({ companies: 300, seed: 4, outDir: input });
    const lines: Buffer[] = [];
    let counts: Parameters<BuildThreadModule.FedSearchIndex['counts']>[0] | null = null;
    await stageImport(input, path.join(dir, 'staging'), {
      companies: { lines: (text) => void lines.push(text), counts: (c) => void (counts = c) },
    });
    expect(niceThreads()).toEqual([]);
    const fed = (await mod.feedSearchIndex())!;
    try {
      expect(niceThreads()).toEqual([19]);
      await fed.lines(lines[0]!.subarray(0, lines[0]!.indexOf('\n', 1000) + 1));
      fed.readAll();
      await fed.lines(lines[0]!.subarray(lines[0]!.indexOf('\n', 1000) + 1));
      expect(await until(() => niceThreads().length === 0)).toBe(true);
      fed.counts(counts!);
      expect(await fed.save(path.join(dir, 'fed'), 'k')).toEqual({ companies: 300 });
    } finally {
      fed.stop();
    }
  });

  itRaisingPriority(
    mayRaise,
    'ends the thread of a fed build that is stopped, and its index is never built',
    async () => {
      const fed = (await mod.feedSearchIndex())!;
      const { worker } = buildThreads().at(-1)!;
      fed.stop();
      await expect(fed.save(path.join(dir, 'never'), 'k')).rejects.toThrow();
      expect(fs.existsSync(path.join(dir, 'never'))).toBe(false);
      expect(await until(() => worker.threadId === -1)).toBe(true);
    },
  );

  it('hands the search threads the index at once, and saves it for the next start', async () => {
    const { SearchIndexHolder } = compiledModule<Holders>(compiled, 'search/search-index-holder');
    const { SearchThreads } = compiledModule<Threads>(compiled, 'search/search-threads');
    const threads = new SearchThreads(1);
    const file = path.join(dir, 'g-1.search-index');
    const s = {
      ...store().store,
      generation: 1,
      derivedDataFile: () => ({ file, key: 'g-1#0' }),
    } as unknown as GraphStore;
    const here = await CompanySearchIndex.build(store().store);
    await here.save(path.join(dir, 'here'), 'g-1#0');
    const holder = new SearchIndexHolder(s, undefined, threads);
    const fromShared = jest.spyOn(compiledIndex(), 'fromShared');
    try {
      await holder.rebuild();
      // Saved by the build's thread and read back: the build's arrays were never copied to this thread.
      expect(fromShared).not.toHaveBeenCalled();
      for (const c of CRITERIA)
        expect(await threads.search(1, criteria(c))).toEqual(here.search(criteria(c)));
      await holder.saved();
      expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'here')))).toBe(true);
      // Nothing left under a temporary name.
      expect(fs.readdirSync(dir).sort()).toEqual(['g-1.search-index', 'here']);
    } finally {
      fromShared.mockRestore();
      await holder.close();
    }
  });

  it('keeps no file of an index whose data changed while it was built', async () => {
    const { SearchIndexHolder } = compiledModule<Holders>(compiled, 'search/search-index-holder');
    const file = path.join(dir, 'g.search-index');
    let key = 'g-1#0';
    const s = {
      ...store(rows(), (batch) => {
        // An import ends during the build.
        if (batch === 3) key = 'g-2#0';
      }).store,
      generation: 1,
      derivedDataFile: () => ({ file, key }),
    } as unknown as GraphStore;
    const holder = new SearchIndexHolder(s);
    try {
      const index = await holder.rebuild();
      expect(index.size).toBe(3000);
      await holder.saved();
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await holder.close();
    }
  });
});

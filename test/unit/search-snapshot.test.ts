import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SearchRow } from '../../src/domain/search-row';
import type { GraphStore } from '../../src/store/graph-store';
import { CompanySearchIndex } from '../../src/search/company-search';
import type { SearchCriteria } from '../../src/search/company-search';
import { SearchIndexHolder } from '../../src/search/search-index-holder';
import type * as SearchThreadsModule from '../../src/search/search-threads';
import { PackedStrings } from '../../src/store/packed-strings';
import { SnapshotReader, SnapshotWriter } from '../../src/store/snapshot';
import { compiledDir, compiledModule } from '../support/compiled-sources';
import { buildKeyedSearchRow } from '../support/factories';
import { turnsDuring } from '../support/turns';

const WORDS = [
  'Acme',
  'Bolt',
  'Castings',
  'Delta',
  'Steel',
  'Nordic',
  'Pacific',
  'Glass',
  'Motors',
  'Semiconductor',
];
const FORMS = ['GmbH', 'Co Ltd', 'Inc', 'SA', 'PLC', 'Corporation'];

/** 400 companies with every search key filled in some of them, the same each time. */
function rows(): SearchRow[] {
  return Array.from({ length: 400 }, (_, i) =>
    buildKeyedSearchRow(
      i,
      `${WORDS[i % 10]} ${WORDS[(i * 7 + 3) % 10]} ${i} ${FORMS[i % 6]}`,
      `${WORDS[(i + 1) % 10]} Trading ${i}`,
      ['DE', 'United States of America', 'Japan', null],
    ),
  );
}

function fakeStore(dir: string) {
  const state = { generation: 1, scans: 0, key: 'g-1#0' };
  const store = {
    get generation() {
      return state.generation;
    },
    scanSearchRows(onBatch: (rows: SearchRow[]) => void) {
      state.scans++;
      onBatch(rows());
      return Promise.resolve();
    },
    derivedDataFile: (name: string) => ({ file: path.join(dir, `g-1.${name}`), key: state.key }),
  } as unknown as GraphStore;
  return { store, state };
}

const CRITERIA: Partial<SearchCriteria>[] = [
  { name: 'acme steel' },
  { name: 'bolt', includeSubsidiaries: false },
  { name: 'nordc glass' },
  { name: 'pacific trading' },
  { name: 'ams', sort: 'similarity', minSimilarity: 0.1 },
  { city: 'hamburg' },
  { industry: 'NAICS:331110', name: 'delta' },
  { country: 'Germany' },
  { website: 'site7.example' },
  { identifier: 'LEI000042' },
  {},
  { offset: 30, limit: 5 },
];

function answers(index: CompanySearchIndex) {
  return {
    searches: CRITERIA.map((c) =>
      index.search({ minSimilarity: 0.3, includeSubsidiaries: true, limit: 10, offset: 0, ...c }),
    ),
    suggestions: ['ac', 'acme st', 'semi', 'bolt castings 1', 'pt'].map((q) => index.suggest(q, 5, false)),
    counterparts: ['v0', 'v1', 'v3', 'v399', 'nope'].map((vid) => index.summary(vid)),
  };
}

describe('search index snapshot', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-snapshot-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads back an index that answers every kind of search exactly as the one built', async () => {
    const { store } = fakeStore(dir);
    const built = await CompanySearchIndex.build(store);
    const file = path.join(dir, 'index');
    await built.save(file, 'k1');
    const loaded = CompanySearchIndex.load(file, 'k1');
    expect(loaded).not.toBeNull();
    const want = answers(built);
    // The criteria are not vacuous: most find something.
    expect(want.searches.filter((s) => s.hits.length > 0).length).toBeGreaterThan(9);
    expect(want.suggestions.filter((s) => s.length > 0).length).toBeGreaterThan(3);
    expect(want.counterparts.map((c) => c?.country ?? null)).toEqual([
      'DE',
      'United States of America',
      null,
      null,
      null,
    ]);
    expect(answers(loaded!)).toEqual(want);
    expect(loaded!.size).toBe(400);
  });

  it('builds in steps that let other work run between them (a rebuild runs beside serving)', async () => {
    const { store } = fakeStore(dir);
    const { result: built, turns } = await turnsDuring(() => CompanySearchIndex.build(store));
    // The fake store hands its rows over at once: every turn came from the build's own steps.
    expect(turns).toBeGreaterThanOrEqual(5);
    expect(built.size).toBe(400);
  });

  it('refuses a file of another key, a truncated file and a file that is no snapshot', async () => {
    const { store } = fakeStore(dir);
    const file = path.join(dir, 'index');
    // A save cut off by a crash left its temporary file behind; the next save removes it.
    fs.writeFileSync(`${file}.tmp-999999`, 'half a snapshot');
    // A running process's temporary file is its save under way (two servers on one DATA_DIR): kept.
    fs.writeFileSync(`${file}.tmp-${process.ppid}`, 'a save under way');
    await (await CompanySearchIndex.build(store)).save(file, 'k1');
    expect(fs.readdirSync(dir).sort()).toEqual(['index', `index.tmp-${process.ppid}`]);
    fs.rmSync(`${file}.tmp-${process.ppid}`);
    expect(CompanySearchIndex.load(file, 'k2')).toBeNull();
    expect(SnapshotReader.keyOf(file)).toBe('k1');
    expect(CompanySearchIndex.load(path.join(dir, 'missing'), 'k1')).toBeNull();
    expect(SnapshotReader.keyOf(path.join(dir, 'missing'))).toBeNull();
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, bytes.subarray(0, bytes.length - 100));
    expect(CompanySearchIndex.load(file, 'k1')).toBeNull();
    fs.writeFileSync(file, 'not a snapshot at all');
    expect(CompanySearchIndex.load(file, 'k1')).toBeNull();
    expect(SnapshotReader.keyOf(file)).toBeNull();
    // The magic, then a header that is JSON but not an object.
    const head = Buffer.from('null');
    fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, 8), Buffer.from([head.length, 0, 0, 0]), head]));
    expect(SnapshotReader.keyOf(file)).toBeNull();
    expect(CompanySearchIndex.load(file, 'k1')).toBeNull();
  });

  it('is saved by the first start and loaded by the next, until the data changes', async () => {
    const { store, state } = fakeStore(dir);
    const first = new SearchIndexHolder(store);
    const q = async (h: SearchIndexHolder) =>
      (await h.get()).search({
        name: 'acme',
        minSimilarity: 0.3,
        includeSubsidiaries: true,
        limit: 5,
        offset: 0,
      });
    const a = await q(first);
    expect(state.scans).toBe(1);
    // Searches do not wait for the save.
    await first.saved();
    expect(fs.existsSync(path.join(dir, 'g-1.search-index'))).toBe(true);

    // A restart: the saved index is read, the store is not scanned.
    const second = new SearchIndexHolder(store);
    expect(await q(second)).toEqual(a);
    expect(state.scans).toBe(1);

    // A seed changed the data: the key moved on, so the store is read again.
    state.key = 'g-1#1';
    const third = new SearchIndexHolder(store);
    await q(third);
    expect(state.scans).toBe(2);
  });

  it('is loaded for a server with its sections read on the thread pool, not the calling thread', async () => {
    const { store } = fakeStore(dir);
    const file = path.join(dir, 'index');
    await (await CompanySearchIndex.build(store)).save(file, 'k1');
    const reads = jest.spyOn(fs, 'readSync');
    let loaded: Awaited<ReturnType<typeof CompanySearchIndex.loadShared>>;
    try {
      loaded = await CompanySearchIndex.loadShared(file, 'k1', false);
      // Opening reads the header where it is called (two reads); every section comes after it.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      reads.mockRestore();
    }
    const criteria = { name: 'acme', minSimilarity: 0.3, includeSubsidiaries: true, limit: 5, offset: 0 };
    const answer = loaded!.index.search(criteria);
    expect(answer.hits.length).toBeGreaterThan(0);
    expect(answer).toEqual(CompanySearchIndex.load(file, 'k1')!.search(criteria));
  });

  it('is loaded without a string made for each vid, and finds companies by vid as a build does', async () => {
    const { store } = fakeStore(dir);
    const file = path.join(dir, 'index-vids');
    const built = await CompanySearchIndex.build(store);
    await built.save(file, 'k1');
    const decoded = jest.spyOn(PackedStrings.prototype, 'get');
    let loaded: CompanySearchIndex | null;
    try {
      loaded = CompanySearchIndex.load(file, 'k1');
      expect(decoded).not.toHaveBeenCalled();
    } finally {
      decoded.mockRestore();
    }
    const vids = [...rows().map((r) => r.vid), 'nobody', 'caf\u00e9'];
    expect(vids.map((vid) => loaded!.has(vid))).toEqual(vids.map((vid) => built.has(vid)));
    expect(vids.filter((vid) => loaded!.has(vid))).toHaveLength(400);
    expect(vids.map((vid) => loaded!.summary(vid))).toEqual(vids.map((vid) => built.summary(vid)));
  });

  it('leaves no temporary file behind when a save fails', async () => {
    // A directory where the file should go: the final rename fails after every byte was written.
    const file = path.join(dir, 'taken');
    fs.mkdirSync(file);
    fs.writeFileSync(path.join(file, 'inside'), 'x');
    const w = new SnapshotWriter().json({ a: 1 }).array(new Uint32Array(1000));
    await expect(w.save(file, 'k')).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual(['taken']);
  });

  it('reads a snapshot larger than 2 GiB, as the index of about 2 million companies makes', () => {
    // A sparse file: the hole before the last section costs no disk.
    const file = path.join(dir, 'big');
    const far = 2 ** 31 + 4096;
    const header = Buffer.from(
      JSON.stringify({
        key: 'k',
        sections: [
          { kind: 'u32', at: 0, bytes: 8 },
          { kind: 'bytes', at: far, bytes: 5 },
        ],
      }),
    );
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    const prefix = Buffer.concat([Buffer.from('TGSNAP1\n'), length, header]);
    const base = Math.ceil(prefix.length / 8) * 8;
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, Buffer.concat([prefix, Buffer.alloc(base - prefix.length, 0x20)]), 0, undefined, 0);
    fs.writeSync(fd, Buffer.from(new Uint32Array([7, 2 ** 32 - 1]).buffer), 0, 8, base);
    fs.writeSync(fd, Buffer.from('tail!'), 0, 5, base + far);
    fs.closeSync(fd);
    expect(fs.statSync(file).size).toBeGreaterThan(2 ** 31);

    const r = SnapshotReader.open(file, 'k');
    expect(r).not.toBeNull();
    expect(Array.from(r!.u32())).toEqual([7, 2 ** 32 - 1]);
    expect(r!.bytes().toString()).toBe('tail!');
    expect(r!.done).toBe(true);
    r!.close();
  });
});

type ThreadsModule = typeof SearchThreadsModule;

/** The search threads run compiled JavaScript (see compiledModule). */
function compiledThreads(dir: string): ThreadsModule {
  return compiledModule<ThreadsModule>(dir, 'search/search-threads');
}

describe('search threads', () => {
  let dir: string;
  let compiled: string;
  beforeAll(() => {
    compiled = compiledDir('threads');
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-threads-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterAll(() => fs.rmSync(compiled, { recursive: true, force: true }));

  it('answer every kind of search as the main thread does, over the index in shared memory', async () => {
    const { store } = fakeStore(dir);
    const file = path.join(dir, 'index');
    await (await CompanySearchIndex.build(store)).save(file, 'k1');
    const loaded = (await CompanySearchIndex.loadShared(file, 'k1'))!;
    expect(loaded.shared!.sections.every((s) => s.bytes instanceof SharedArrayBuffer)).toBe(true);
    const mod = compiledThreads(compiled);
    expect(mod.searchThreadsAvailable()).toBe(true);
    const threads = new mod.SearchThreads(2);
    try {
      expect(threads.size).toBe(2);
      const criteria = CRITERIA.map((c): SearchCriteria => ({
        minSimilarity: 0.3,
        includeSubsidiaries: true,
        limit: 10,
        offset: 0,
        ...c,
      }));
      // No index handed over yet: the caller searches on its own thread.
      expect(await threads.search(7, criteria[0]!)).toBeNull();
      threads.setIndex(7, loaded.shared!);
      const onThreads = await Promise.all(criteria.map((c) => threads.search(7, c)));
      expect(onThreads).toEqual(criteria.map((c) => loaded.index.search(c)));
      expect(onThreads.some((r) => r!.hits.length > 3)).toBe(true);
      // A search for another generation's data is not answered from this index.
      expect(await threads.search(8, criteria[0]!)).toBeNull();
      // Suggestions too.
      const asks = ['ac', 'acme st', 'semi', 'bolt castings 1', 'pt'].map((query) => ({
        query,
        limit: 5,
        includeSubsidiaries: false,
      }));
      const suggested = await Promise.all(asks.map((a) => threads.suggest(7, a)));
      expect(suggested).toEqual(
        asks.map((a) => loaded.index.suggest(a.query, a.limit, a.includeSubsidiaries)),
      );
      expect(suggested.filter((s) => s!.length > 0).length).toBeGreaterThan(3);
      expect(await threads.suggest(8, asks[0]!)).toBeNull();
    } finally {
      await threads.close();
    }
    expect(threads.size).toBe(0);
    expect(
      await threads.search(7, { minSimilarity: 0.3, includeSubsidiaries: true, limit: 1, offset: 0 }),
    ).toBeNull();
  });

  it('get the live index from the holder: once saved after a build, and at once when loaded', async () => {
    const { store } = fakeStore(dir);
    const mod = compiledThreads(compiled);
    const threads = new mod.SearchThreads(1);
    // Counts the answers a thread gave (null: the caller answers on its own thread).
    const counted =
      <A extends unknown[], R>(ask: (...a: A) => Promise<R | null>, answered: () => void) =>
      async (...a: A) => {
        const r = await ask(...a);
        if (r) answered();
        return r;
      };
    let answeredThere = 0;
    threads.search = counted(threads.search.bind(threads), () => answeredThere++);
    let suggestedThere = 0;
    threads.suggest = counted(threads.suggest.bind(threads), () => suggestedThere++);
    const ask = { query: 'nordic gl', limit: 5, includeSubsidiaries: false };
    const c: SearchCriteria = {
      name: 'nordc glass',
      minSimilarity: 0.3,
      includeSubsidiaries: true,
      limit: 10,
      offset: 0,
    };
    try {
      const first = new SearchIndexHolder(store, undefined, threads);
      const local = (await first.get()).search(c);
      // Built from the store: searched here until the saved index is back in shared memory.
      expect(await first.search(c)).toEqual(local);
      expect(answeredThere).toBeLessThanOrEqual(1);
      await first.saved();
      const before = answeredThere;
      expect(await first.search(c)).toEqual(local);
      expect(answeredThere).toBe(before + 1);
      const localSuggestions = (await first.get()).suggest(ask.query, ask.limit, ask.includeSubsidiaries);
      expect(localSuggestions.length).toBeGreaterThan(0);
      expect(await first.suggest(ask)).toEqual(localSuggestions);
      expect(suggestedThere).toBe(1);
      // A restart loads the saved index straight into shared memory.
      const second = new SearchIndexHolder(store, undefined, threads);
      await second.rebuild();
      expect(await second.search(c)).toEqual(local);
      expect(answeredThere).toBe(before + 2);
    } finally {
      await threads.close();
    }
  });

  it('send the searches of a thread that stopped back to the caller', async () => {
    const { store } = fakeStore(dir);
    const file = path.join(dir, 'index');
    await (await CompanySearchIndex.build(store)).save(file, 'k1');
    const loaded = (await CompanySearchIndex.loadShared(file, 'k1'))!;
    const mod = compiledThreads(compiled);
    const threads = new mod.SearchThreads(1);
    try {
      threads.setIndex(1, loaded.shared!);
      const c: SearchCriteria = {
        name: 'acme',
        minSimilarity: 0.3,
        includeSubsidiaries: true,
        limit: 5,
        offset: 0,
      };
      expect(await threads.search(1, c)).toEqual(loaded.index.search(c));
      // The thread fails (as a crash would) before it can answer: the error event comes in the same
      // turn as the search, so its search in flight, and later ones, come back as null.
      const inFlight = threads.search(1, c);
      const { worker } = (
        threads as unknown as {
          threads: { worker: { emit(e: string, err: Error): void; terminate(): Promise<number> } }[];
        }
      ).threads[0]!;
      worker.emit('error', new Error('crashed'));
      expect(await inFlight).toBeNull();
      expect(threads.size).toBe(0);
      await worker.terminate();
      expect(await threads.search(1, c)).toBeNull();
    } finally {
      await threads.close();
    }
  });
});

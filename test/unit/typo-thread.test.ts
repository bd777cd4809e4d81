import fs from 'node:fs';
import os from 'node:os';
import workerThreads from 'node:worker_threads';
import type * as WordIndexModule from '../../src/search/word-index';
import { TYPO_THREAD_MIN_WORDS, WordIndex } from '../../src/search/word-index';
import { compiledDir, compiledModule } from '../support/compiled-sources';
import { mayRaisePriority } from '../../src/search/thread-priority';
import { itRaisingPriority, threadNices } from '../support/thread-priority';

type WordIndexes = typeof WordIndexModule;

/** A made-up word of 5 to 10 letters from a seeded generator. */
function wordMaker(seed: number): () => string {
  let s = seed;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) / (1 << 24);
  const letters = 'abcdefghijklmnoprstuvwyz';
  return () => {
    const n = 5 + Math.floor(next() * 6);
    let w = '';
    for (let i = 0; i < n; i++) w += letters[Math.floor(next() * letters.length)]!;
    return w;
  };
}

/**
 * Names over more distinct words than a typo thread is started for; every third word also appears with
 * one letter changed, so that many words have typo words.
 */
function names(): string[][] {
  const word = wordMaker(7);
  const out: string[][] = [];
  for (let i = 0; out.length < TYPO_THREAD_MIN_WORDS; i++) {
    const a = word();
    const b = word();
    out.push([`${a} ${b}`]);
    if (i % 3 === 0) out.push([`${a.slice(0, 2)}x${a.slice(3)} ${word()}`]);
  }
  return out;
}

describe('typo words found on a thread of their own', () => {
  const dir = compiledDir('typo-thread');
  const RealWorker = workerThreads.Worker;
  const started: string[] = [];
  const workers: workerThreads.Worker[] = [];
  beforeAll(() => {
    // Every worker started is noted, so that the tests know the thread ran (the module reads this
    // property at each start).
    workerThreads.Worker = class extends RealWorker {
      constructor(file: string | URL, options?: workerThreads.WorkerOptions) {
        super(file, options);
        started.push(String(file));
        workers.push(this);
      }
    };
  });
  afterAll(() => {
    workerThreads.Worker = RealWorker;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are the typo words found on the building thread, word for word', async () => {
    const compiled = compiledModule<WordIndexes>(dir, 'search/word-index');
    const all = names();
    const rank = Uint32Array.from(all, (_, i) => i);
    const there = await compiled.WordIndex.build(all, rank);
    expect(started.filter((f) => f.endsWith('typo-worker.js'))).toHaveLength(1);
    // From sources there is no worker script: the same table is found here.
    const here = await WordIndex.build(all, rank);
    expect(here.vocabularySize).toBe(there.vocabularySize);
    expect(here.vocabularySize).toBeGreaterThanOrEqual(TYPO_THREAD_MIN_WORDS);
    let withTypos = 0;
    for (const [text] of all) {
      for (const w of text!.split(' ')) {
        const expected = [...here.typoWords(w)];
        expect([...there.typoWords(w)]).toEqual(expected);
        if (expected.length > 0) withTypos++;
      }
    }
    expect(withTypos).toBeGreaterThan(500);
  });

  it('end with the build when it is stopped', async () => {
    const compiled = compiledModule<WordIndexes>(dir, 'search/word-index');
    const all = names();
    const stop = new AbortController();
    const before = started.length;
    const begun = await compiled.WordIndex.start(all, undefined, stop.signal);
    expect(started.length).toBe(before + 1);
    const worker = workers[workers.length - 1]!;
    let answered = false;
    worker.once('message', () => (answered = true));
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    stop.abort(new Error('closing'));
    await expect(begun.finish(Uint32Array.from(all, (_, i) => i))).rejects.toThrow('closing');
    // Terminated, not left to find its table.
    await exited;
    expect(answered).toBe(false);
  });

  const mayRaise = mayRaisePriority();
  const niceOfThreads = threadNices;

  itRaisingPriority(
    mayRaise,
    'start at the priority of the thread that begins them, and take the one they are asked to',
    async () => {
      const compiled = compiledModule<WordIndexes>(dir, 'search/word-index');
      // Enough words for the thread to take a good while: it must be seen before it ends.
      const word = wordMaker(11);
      const all = Array.from({ length: 40_000 }, () => [`${word()} ${word()}`]);
      const raiseWhen = new Int32Array(new SharedArrayBuffer(4));
      const own = os.getPriority(0);
      expect(niceOfThreads().filter((n) => n === 19)).toEqual([]);
      // Begun at the lowest priority, as an import's build thread begins it.
      os.setPriority(0, 19);
      let begun: Awaited<ReturnType<typeof compiled.WordIndex.start>>;
      try {
        begun = await compiled.WordIndex.start(all, undefined, undefined, { raiseWhen, to: own });
      } finally {
        os.setPriority(0, own);
      }
      const worker = workers[workers.length - 1]!;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      let ended = false;
      void exited.then(() => (ended = true));
      // A thread at the lowest priority gets next to no CPU while other work keeps both cores busy
      // (a benchmark or a second test run beside this one), and may take many seconds to look at
      // its flag: the wait is long, and ends as soon as the flag is seen.
      const until = async (what: () => boolean) => {
        const deadline = Date.now() + 60_000;
        while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        return what();
      };
      // The typo thread inherited the lowest priority, and keeps it until asked.
      expect(niceOfThreads().filter((n) => n === 19)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 50));
      expect(niceOfThreads().filter((n) => n === 19)).toHaveLength(1);
      Atomics.store(raiseWhen, 0, 1);
      expect(await until(() => !niceOfThreads().includes(19))).toBe(true);
      // Raised while it still ran, not merely ended.
      expect(ended).toBe(false);
      const index = await begun.finish(Uint32Array.from(all, (_, i) => i));
      expect(index.vocabularySize).toBeGreaterThan(40_000);
      await exited;
    },
    180_000,
  );
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import workerThreads from 'node:worker_threads';
import type * as StageThreadModule from '../../src/import/stage-thread';
import type * as StageResultModule from '../../src/import/stage-result';
import type { CompanyCountColumns, ImportProgress } from '../../src/import/stage-result';
import { generateDataset } from '../../src/demo/generate';
import { stageImport } from '../../src/import/stage';
import { TABLES, stagingFile } from '../../src/store/tables';
import type { TableName } from '../../src/store/tables';
import { compiledDir, compiledModule } from '../support/compiled-sources';

type StageThread = typeof StageThreadModule;
type StageResults = typeof StageResultModule;

/** A sink that keeps what it hears: the Company rows, whether every file was read, the counts. */
function keepingSink() {
  const heard = {
    names: [] as Buffer[],
    lines: [] as Buffer[],
    readAll: 0,
    counts: null as CompanyCountColumns | null,
    /** The calls, names and lines but the first of a row of them left out. */
    calls: [] as string[],
  };
  const call = (name: string) => {
    if ((name !== 'lines' && name !== 'names') || heard.calls.at(-1) !== name) heard.calls.push(name);
  };
  return {
    heard,
    sink: {
      names: (text: Buffer) => {
        call('names');
        heard.names.push(Buffer.from(text));
      },
      lines: (text: Buffer) => {
        call('lines');
        heard.lines.push(Buffer.from(text));
        // As the search index's build does: ready for more a moment later.
        return new Promise<void>((resolve) => setTimeout(resolve, 1));
      },
      readAll: () => {
        call('readAll');
        heard.readAll++;
      },
      allLines: () => call('allLines'),
      counts: (c: CompanyCountColumns) => {
        call('counts');
        heard.counts = c;
      },
    },
  };
}

const tables = Object.keys(TABLES) as TableName[];

describe('the staging on a thread of its own', () => {
  const compiled = compiledDir('stage-thread');
  const RealWorker = workerThreads.Worker;
  const started: string[] = [];
  let dir: string;
  let input: string;
  let mod: StageThread;
  let results: StageResults;
  beforeAll(async () => {
    // Every worker started is noted, so that the tests know the staging thread ran.
    workerThreads.Worker = class extends RealWorker {
      constructor(file: string | URL, options?: workerThreads.WorkerOptions) {
        super(file, options);
        started.push(path.basename(String(file)));
      }
    };
    mod = compiledModule<StageThread>(compiled, 'import/stage-thread');
    results = compiledModule<StageResults>(compiled, 'import/stage-result');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-stage-thread-'));
    input = path.join(dir, 'input');
    await generateDataset({ companies: 300, seed: 5, outDir: input });
  });
  afterAll(() => {
    workerThreads.Worker = RealWorker;
    fs.rmSync(compiled, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stages what stageImport stages here, and hands over the same rows, progress and counts', async () => {
    const here = keepingSink();
    const hereProgress: ImportProgress[] = [];
    const expected = await stageImport(input, path.join(dir, 'here'), {
      companies: here.sink,
      onProgress: (p) => hereProgress.push(p),
    });
    const there = keepingSink();
    const progress: ImportProgress[] = [];
    const before = started.filter((f) => f === 'stage-worker.js').length;
    const result = await mod.stageOnThread(input, path.join(dir, 'there'), {
      companies: there.sink,
      onProgress: (p) => progress.push(p),
      // An evidence thread of its own inside it (the staging files are the same either way).
      evidenceWorker: true,
    });
    expect(started.filter((f) => f === 'stage-worker.js').length).toBe(before + 1);
    expect(result).toEqual(expected);
    for (const t of tables) {
      expect(fs.readFileSync(path.join(dir, 'there', stagingFile(t)), 'utf8')).toBe(
        fs.readFileSync(path.join(dir, 'here', stagingFile(t)), 'utf8'),
      );
    }
    expect(Buffer.concat(there.heard.lines).toString('utf8')).toBe(
      Buffer.concat(here.heard.lines).toString('utf8'),
    );
    expect(there.heard.lines.length).toBeGreaterThan(0);
    // The names first, one line for each company.
    expect(Buffer.concat(there.heard.names).toString('utf8')).toBe(
      Buffer.concat(here.heard.names).toString('utf8'),
    );
    expect(Buffer.concat(there.heard.names).toString('utf8').split('\n')).toHaveLength(301);
    expect(there.heard.calls[0]).toBe('names');
    expect(there.heard.readAll).toBe(1);
    // Every line handed over, then told so once, then the counts; readAll somewhere before the counts.
    const told = there.heard.calls.filter((c) => c !== 'readAll');
    expect(told.slice(-3)).toEqual(['lines', 'allLines', 'counts']);
    expect(told.filter((c) => c === 'allLines')).toHaveLength(1);
    expect(there.heard.calls.indexOf('readAll')).toBeLessThan(there.heard.calls.indexOf('counts'));
    expect(there.heard.calls).toEqual(here.heard.calls);
    // As plain arrays: typed arrays from another thread are of another realm than the test's.
    const plain = (c: CompanyCountColumns | null) =>
      c && Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Array.from(v as ArrayLike<number>)]));
    expect(plain(there.heard.counts)).toEqual(plain(here.heard.counts));
    expect(plain(there.heard.counts)?.suppliers).toHaveLength(300);
    expect(progress).toEqual(hereProgress);
  });

  it('fails as stageImport does, with the rejected rows, and leaves no staging files', async () => {
    const bad = path.join(dir, 'bad');
    fs.cpSync(input, bad, { recursive: true });
    const companies = path.join(bad, 'companies.csv');
    const lines = fs.readFileSync(companies, 'utf8').split('\n');
    // The second company's vid repeats the first's.
    lines[2] = lines[2]!.replace(/^[^,]*/, lines[1]!.split(',')[0]!);
    fs.writeFileSync(companies, lines.join('\n'));
    const out = path.join(dir, 'bad-staging');
    const err = await mod.stageOnThread(bad, out).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(results.ImportAbortedError);
    const aborted = err as InstanceType<StageResults['ImportAbortedError']>;
    expect(aborted.rejected).toEqual([
      { file: 'companies.csv', line: 3, reason: expect.stringMatching(/duplicate vid/) as string },
    ]);
    expect(fs.readdirSync(out).filter((f) => tables.some((t) => f.startsWith(stagingFile(t))))).toEqual([]);
  });

  it('stops when the sink of the Company rows fails', async () => {
    const failing = {
      lines: () => Promise.reject(new Error('the build thread is gone')),
      counts: () => undefined,
    };
    await expect(
      mod.stageOnThread(input, path.join(dir, 'sink-failed'), { companies: failing }),
    ).rejects.toThrow('the build thread is gone');
  });
});

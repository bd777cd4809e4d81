import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importDirectory, removeStaleStaging, stagingRoot } from '../../src/import/import-directory';
import { ImportBusyError, takeImportLock } from '../../src/import/import-lock';
import type { Logger } from '../../src/logger';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import { companyRow, relationshipRow, writeImportDir } from '../support/factories';
import { runCli } from '../support/cli';
import { tempDir } from '../support/paths';
import { recordingLogger, startTestServer } from '../support/server';

/** Runs the `tiergraph` command from the sources with DATA_DIR set. */
function cli(dataDir: string, ...args: string[]) {
  return runCli(args, { DATA_DIR: dataDir, STORE: 'embedded', LOG_LEVEL: 'warn' });
}

async function companyCount(dataDir: string): Promise<number> {
  const store = new EmbeddedGraphStore({
    dir: path.join(dataDir, 'graph'),
    connections: 1,
    bufferPoolMb: 64,
  });
  await store.open();
  try {
    return (await store.stats()).companies;
  } finally {
    await store.close();
  }
}

/** Data rows (the lines after the header, blank ones aside) of each CSV file of an import directory. */
function dataRows(dir: string): Record<string, number> {
  const rows: Record<string, number> = {};
  for (const f of fs.readdirSync(dir).filter((name) => name.endsWith('.csv')))
    rows[f] = fs
      .readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .slice(1)
      .filter((l) => l.trim() !== '').length;
  return rows;
}

/** The saved search indexes in a data directory's graph directory. */
function searchIndexFiles(dataDir: string): string[] {
  return fs.readdirSync(path.join(dataDir, 'graph')).filter((f) => f.endsWith('.search-index'));
}

/** The graph generations in a graph directory, by the files named after them. */
function generationsIn(graph: string): string[] {
  return [...new Set(fs.readdirSync(graph).flatMap((f) => /^g-\d{6}\.kuzu/.exec(f) ?? []))].sort();
}

describe('tiergraph import: safety of a replacing import', () => {
  let root: string;
  let dataDir: string;
  let good: string;
  let mostlyBad: string;

  beforeAll(() => {
    root = tempDir('import-cli');
    dataDir = path.join(root, 'data');
    good = writeImportDir(path.join(root, 'good'), {
      companies: [companyRow({ vid: 'a' }), companyRow({ vid: 'b' }), companyRow({ vid: 'c' })],
      relationships: [relationshipRow('a', 'b')],
    });
    // Seven companies, six of them rejected (bad ids, missing names, a bad date).
    mostlyBad = writeImportDir(path.join(root, 'mostly-bad'), {
      companies: [
        companyRow({ vid: 'ok' }),
        companyRow({ vid: 'bad 1' }),
        companyRow({ vid: 'bad 2' }),
        companyRow({ vid: 'x3', name: '' }),
        companyRow({ vid: 'x4', name: '' }),
        companyRow({ vid: 'x5', incorporation_date: '2023-02-30' }),
        companyRow({ vid: 'x6', incorporation_date: 'soon' }),
      ],
    });
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('imports a clean file set with exit status 0', async () => {
    const r = cli(dataDir, 'import', good);
    expect(r.err).not.toMatch(/rejected/);
    expect(r.status).toBe(0);
    // The rows it says it imported are the files' rows, each file's given, and the store's tables apart:
    // a relationship is two rows there, and evidence lives inside them.
    const rows = dataRows(good);
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(4);
    expect(r.out).toMatch(new RegExp(`^Imported ${total} rows from ${Object.keys(rows).length} files in `));
    for (const [file, n] of Object.entries(rows)) expect(r.out).toContain(`\n  ${file}: ${n} rows read\n`);
    expect(r.out).toContain('\nThe store holds:\n  Company: 3\n  Edge: 1\n  SUPPLIES: 1\n');
    // The progress bar's first line is a step's first report with something done, not a phase no step
    // has, nor a "0 rows" that stays in a log (this output is not a terminal).
    const progress = r.err.split('\n').filter((l) => l.includes('|'));
    expect(progress[0]).toMatch(/^ read \|.*\| [1-9]\d* rows \|.*companies\.csv/);
    expect(r.err).not.toMatch(/validate/);
    expect(await companyCount(dataDir)).toBe(3);
    // The search index of the new graph is built while it loads, so the first start loads it.
    expect(searchIndexFiles(dataDir)).toHaveLength(1);
  });

  it('keeps stdout to its summary at the default log level', () => {
    const r = runCli(['import', good], { DATA_DIR: path.join(root, 'default-level'), STORE: 'embedded' });
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/^Imported \d+ rows from /);
    expect(r.out).not.toMatch(/"level":/);
  });

  it('leaves the search index to the first start when told to', async () => {
    const elsewhere = path.join(root, 'no-index');
    const r = cli(elsewhere, 'import', good, '--no-search-index');
    expect(r.status).toBe(0);
    expect(await companyCount(elsewhere)).toBe(3);
    expect(searchIndexFiles(elsewhere)).toEqual([]);
  });

  it('refuses a mostly rejected file set by default, leaves the graph as it was and names the report', async () => {
    const r = cli(dataDir, 'import', mostlyBad);
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/Import aborted, nothing was changed/);
    const named = /Every rejected row and warning \(file, line, reason, severity\): (\S+)/.exec(r.err);
    expect(named).not.toBeNull();
    expect(fs.readFileSync(named![1]!, 'utf8')).toMatch(/^file,line,reason,severity\n"companies.csv",3,/);
    // The rejected values are the callers' data: for this account only.
    expect(fs.statSync(named![1]!).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(named![1]!)).mode & 0o777).toBe(0o700);
    expect(r.err).toMatch(/--max-rejected N/);
    expect(await companyCount(dataDir)).toBe(3);
  });

  it('keeps the warnings of the rows read before an import stopped in the report it names', () => {
    const dir = writeImportDir(path.join(root, 'warned-then-bad'), {
      companies: [companyRow({ vid: 'w1', domiciled_country: 'Atlantis' }), companyRow({ vid: 'w2' })],
      relationships: [relationshipRow('w1', 'w2', { confidence_score: 1.5 })],
    });
    const report = path.join(root, 'warned.csv');
    const r = cli(path.join(root, 'warned-data'), 'import', dir, '--report', report);
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/Import aborted/);
    // Nothing was imported, so the warnings do not say so.
    expect(r.err).toMatch(/\n1 warning\(s\), none of which rejected a row:\n {2}companies\.csv:2: /);
    const lines = fs.readFileSync(report, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.endsWith(',rejected'))).toHaveLength(1);
    expect(lines.filter((l) => l.endsWith(',warning') && l.includes('Atlantis'))).toHaveLength(1);
  });

  it('dry run: reports every rejected row, says an import would abort, and leaves the store alone', async () => {
    const report = path.join(root, 'dry.csv');
    const r = cli(dataDir, 'import', mostlyBad, '--dry-run', '--report', report);
    expect(r.status).toBe(3);
    expect(r.out).toMatch(/^Dry run: validated 7 rows from \d+ files \(6 rejected\) in /);
    expect(r.out).toContain('\nThe store would hold:\n  Company: 1\n');
    expect(r.out).toMatch(/an import would abort \(6 rejected rows, more than --max-rejected 0\)/);
    expect(fs.readFileSync(report, 'utf8').trim().split('\n')).toHaveLength(7);
    expect(await companyCount(dataDir)).toBe(3);
  });

  it('imports the rest when told to tolerate the rejected rows, with a non-zero exit status', async () => {
    const r = cli(dataDir, 'import', mostlyBad, '--max-rejected', '6');
    expect(r.status).toBe(3);
    expect(r.out).toMatch(/^Imported 1 row from \d+ files \(6 rejected\) in /);
    expect(r.out).toContain('\n  companies.csv: 7 rows read\n');
    expect(r.err).toMatch(/6 row\(s\) rejected/);
    expect(await companyCount(dataDir)).toBe(1);
  });

  it('keeps no more generations than the one served and the one it replaced, with or without a server', async () => {
    const own = path.join(root, 'generations');
    const graph = path.join(own, 'graph');
    const generations = () => generationsIn(graph);
    /** As if the generation CURRENT names had been live for ten minutes. */
    const age = () => {
      const then = new Date(Date.now() - 10 * 60_000);
      fs.utimesSync(path.join(graph, 'CURRENT'), then, then);
    };
    for (let i = 0; i < 2; i++) expect(cli(own, 'import', good).status).toBe(0);
    // Just replaced: a server may still serve it until its watcher switches.
    expect(generations()).toEqual(['g-000001.kuzu', 'g-000002.kuzu']);
    expect(cli(own, 'import', good).status).toBe(0);
    // g-000002 had been live for a moment only: a lagging server might still serve g-000001.
    expect(generations()).toEqual(['g-000001.kuzu', 'g-000002.kuzu', 'g-000003.kuzu']);
    age();
    expect(cli(own, 'import', good).status).toBe(0);
    expect(generations()).toEqual(['g-000003.kuzu', 'g-000004.kuzu']);
    expect(fs.readdirSync(graph).filter((f) => /^g-00000[12]/.test(f))).toEqual([]);
    // A server starting (any open of the store) keeps the one CURRENT names alone.
    expect(await companyCount(own)).toBe(3);
    expect(generations()).toEqual(['g-000004.kuzu']);
  });

  it('removes the generations no server can still be on before it loads the next one', async () => {
    const own = path.join(root, 'room');
    const graph = path.join(own, 'graph');
    // As the command does: the store is not opened, so nothing of it is served by this process.
    const store = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64 });
    const importOnce = () => importDirectory(store, good, { workDir: stagingRoot(own) });
    const during: string[][] = [];
    const run = ConnectionPool.prototype.run;
    const loads = jest.spyOn(ConnectionPool.prototype, 'run').mockImplementation(function (
      this: ConnectionPool,
      ...args: Parameters<ConnectionPool['run']>
    ) {
      if (String(args[0]).startsWith('COPY Company')) during.push(generationsIn(graph));
      return run.apply(this, args);
    });
    try {
      for (let i = 0; i < 2; i++) await importOnce();
      // g-000002 live for a moment only: a lagging server might still serve g-000001.
      await importOnce();
      expect(during[2]).toEqual(['g-000001.kuzu', 'g-000002.kuzu', 'g-000003.kuzu']);
      // Live for ten minutes: every server has switched to g-000003, so g-000002 is nobody's.
      const then = new Date(Date.now() - 10 * 60_000);
      fs.utimesSync(path.join(graph, 'CURRENT'), then, then);
      await importOnce();
      expect(during[3]).toEqual(['g-000003.kuzu', 'g-000004.kuzu']);
      expect(generationsIn(graph)).toEqual(['g-000003.kuzu', 'g-000004.kuzu']);
    } finally {
      loads.mockRestore();
      await store.close();
    }
  });

  it('removes the generation it built when the pointer to it cannot be written', async () => {
    const own = path.join(root, 'pointer');
    const graph = path.join(own, 'graph');
    const store = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64 });
    try {
      await importDirectory(store, good, { workDir: stagingRoot(own) });
      expect(generationsIn(graph)).toEqual(['g-000001.kuzu']);
      // CURRENT is written through CURRENT.tmp: a directory in its place fails that write, as a
      // disk with no room left would.
      fs.mkdirSync(path.join(graph, 'CURRENT.tmp'));
      await expect(importDirectory(store, good, { workDir: stagingRoot(own) })).rejects.toThrow(
        /CURRENT\.tmp/,
      );
      expect(fs.readFileSync(path.join(graph, 'CURRENT'), 'utf8').trim()).toBe('g-000001.kuzu');
      expect(fs.readdirSync(graph).filter((f) => f.startsWith('g-000002'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('removes what the engine made of the next generation when it cannot be opened for the load', async () => {
    const own = path.join(root, 'unopened');
    const graph = path.join(own, 'graph');
    const store = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64 });
    const opened = jest.spyOn(ConnectionPool, 'open').mockRejectedValueOnce(new Error('no connection'));
    try {
      await expect(importDirectory(store, good, { workDir: stagingRoot(own) })).rejects.toThrow(
        'no connection',
      );
      expect(opened).toHaveBeenCalledTimes(1);
      expect(fs.existsSync(graph) ? fs.readdirSync(graph).filter((f) => f.startsWith('g-')) : []).toEqual([]);
      // The next import builds and serves its own as if nothing had happened.
      opened.mockRestore();
      await importDirectory(store, good, { workDir: stagingRoot(own) });
      expect(generationsIn(graph)).toEqual(['g-000001.kuzu']);
    } finally {
      opened.mockRestore();
      await store.close();
    }
  });

  it('tries a failed switch again while the generation before serves on', async () => {
    const own = path.join(root, 'retried');
    const graph = path.join(own, 'graph');
    const importer = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64 });
    const importOnce = () => importDirectory(importer, good, { workDir: stagingRoot(own) });
    await importOnce();
    const errors: string[] = [];
    const logger = {
      info: () => undefined,
      warn: () => undefined,
      debug: () => undefined,
      error: (_: unknown, message: string) => errors.push(message),
    } as unknown as Logger;
    const server = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64, logger });
    await server.open();
    const on = () => /g-\d{6}\.kuzu/.exec(server.derivedDataFile('x')!.file)![0];
    let stop = () => undefined as void;
    try {
      await importOnce();
      expect(on()).toBe('g-000001.kuzu');
      // The server's first try to open the new generation fails, as one short of memory would.
      const opened = jest.spyOn(ConnectionPool, 'open').mockRejectedValueOnce(new Error('out of memory'));
      stop = server.followExternalImports(50, 300);
      await new Promise((r) => setTimeout(r, 200));
      const later = new Date(Date.now() + 1000);
      fs.utimesSync(path.join(graph, 'CURRENT'), later, later);
      const end = Date.now() + 10_000;
      while (on() !== 'g-000002.kuzu' && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      opened.mockRestore();
      expect(on()).toBe('g-000002.kuzu');
      expect(errors).toEqual([
        'could not switch to the new graph; the one before serves on, and the switch is tried again',
      ]);
      expect((await server.stats()).companies).toBe(3);
    } finally {
      stop();
      await server.close();
      await importer.close();
    }
  });

  it('leaves a serving store with only the generation it switched to, after two imports between its looks', async () => {
    const own = path.join(root, 'served');
    const graph = path.join(own, 'graph');
    const generations = () => generationsIn(graph);
    expect(cli(own, 'import', good).status).toBe(0);
    const store = new EmbeddedGraphStore({ dir: graph, connections: 1, bufferPoolMb: 64 });
    await store.open();
    try {
      // Two imports while the server is not looking: the middle one is never served.
      for (let i = 0; i < 2; i++) expect(cli(own, 'import', good).status).toBe(0);
      expect(generations()).toEqual(['g-000001.kuzu', 'g-000002.kuzu', 'g-000003.kuzu']);
      // The generations it leaves are removed off the thread that answers requests.
      const removedHere = jest.spyOn(fs, 'rmSync');
      let removedSync: string[] = [];
      const stop = store.followExternalImports(50);
      try {
        // The watcher takes the file as it finds it first: a change after that wakes it.
        await new Promise((r) => setTimeout(r, 200));
        const later = new Date(Date.now() + 1000);
        fs.utimesSync(path.join(graph, 'CURRENT'), later, later);
        const end = Date.now() + 20_000;
        while (generations().length > 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      } finally {
        stop();
        removedSync = removedHere.mock.calls.map(([f]) => String(f)).filter((f) => f.startsWith(graph));
        removedHere.mockRestore();
      }
      expect(generations()).toEqual(['g-000003.kuzu']);
      expect(removedSync).toEqual([]);
      expect((await store.stats()).companies).toBe(3);
    } finally {
      await store.close();
    }
  });

  it("refuses an import while another one into the same DATA_DIR runs, and takes over a dead one's lock", async () => {
    const staging = stagingRoot(dataDir);
    const lock = path.join(staging, 'import.lock');
    // This process stands for an import under way.
    const release = takeImportLock(staging);
    try {
      const r = cli(dataDir, 'import', good);
      expect(r.status).toBe(1);
      expect(r.err).toContain(
        `Import refused, nothing was changed: another import into this DATA_DIR is running (process ${process.pid} on ${os.hostname()},`,
      );
      expect(r.out).not.toMatch(/Imported/);
      expect(await companyCount(dataDir)).toBe(1);
      // A dry run does not touch the store, so it goes on beside an import.
      expect(cli(dataDir, 'import', good, '--dry-run').status).toBe(0);
      // Held here, it is not taken again here either.
      expect(() => takeImportLock(staging)).toThrow(ImportBusyError);
    } finally {
      release();
    }
    expect(fs.existsSync(lock)).toBe(false);

    // Left by an import killed on this machine: taken over at once.
    fs.writeFileSync(lock, `99999999 ${Date.now()} ${os.hostname()}\n`);
    const r = cli(dataDir, 'import', good);
    expect(r.status).toBe(0);
    expect(await companyCount(dataDir)).toBe(3);
    expect(fs.existsSync(lock)).toBe(false);

    // Written on another machine (or container), whose process ids say nothing here: held while it
    // is touched, stale once it has been silent for two minutes.
    fs.writeFileSync(lock, `1 ${Date.now()} another-host\n`);
    expect(() => takeImportLock(staging)).toThrow(/process 1 on another-host/);
    const old = new Date(Date.now() - 121_000);
    fs.utimesSync(lock, old, old);
    takeImportLock(staging)();

    // This process's own id, written by an earlier process that had it (a restarted container's first
    // process): not this process's import, so taken over.
    fs.writeFileSync(lock, `${process.pid} ${Date.now() - 5000} ${os.hostname()}\n`);
    takeImportLock(staging)();
    expect(fs.readdirSync(staging).filter((f) => f.startsWith('import.lock'))).toEqual([]);
  });

  it('ends with the status of bad settings (2) for arguments it refuses, as for bad environment variables', () => {
    const bad = cli(dataDir, 'import', good, '--max-rejected', 'abc');
    expect(bad.status).toBe(2);
    expect(bad.err).toMatch(/argument 'abc' is invalid/);
    const clash = cli(dataDir, 'import', good, '--dry-run', '--neo4j-admin-files', path.join(root, 'admin'));
    expect(clash.status).toBe(2);
    expect(clash.err).toMatch(/--dry-run and --neo4j-admin-files do not go together/);
    expect(cli(dataDir, 'import').status).toBe(2);
    expect(cli(dataDir, '--version').status).toBe(0);
    const nowhere = cli(dataDir, 'import', path.join(root, 'no-such-dir'));
    expect(nowhere.status).toBe(2);
    expect(nowhere.err).toMatch(/no-such-dir does not exist: name the directory that holds companies\.csv/);
    const tooFew = cli(dataDir, 'generate', '--companies', '1', '--out', path.join(root, 'gen'));
    expect(tooFew.status).toBe(2);
    expect(tooFew.err).toMatch(
      /^error: option '--companies <n>' argument '1' is invalid\. must be from 2 to/,
    );
  });

  it('says that an import failed, and that the graph served is the one before, when it cannot stage', async () => {
    const own = path.join(root, 'failing');
    expect(cli(own, 'import', good).status).toBe(0);
    const current = () => fs.readFileSync(path.join(own, 'graph', 'CURRENT'), 'utf8');
    const before = current();
    // A file where the staging directory goes.
    fs.rmSync(stagingRoot(own), { recursive: true, force: true });
    fs.writeFileSync(stagingRoot(own), '');
    const r = cli(own, 'import', mostlyBad, '--max-rejected', '6');
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/^Import failed: .*(EEXIST|ENOTDIR).*staging/m);
    expect(r.err).toContain('\nNothing was changed: the graph served is the one before this import.\n');
    expect(r.err).not.toContain('ran out of room');
    expect(current()).toBe(before);
    expect(await companyCount(own)).toBe(3);
  });

  it('refuses a report it could not write before it replaces anything', () => {
    const own = path.join(root, 'report-check');
    expect(cli(own, 'import', good).status).toBe(0);
    const current = () => fs.readFileSync(path.join(own, 'graph', 'CURRENT'), 'utf8');
    const before = current();
    // Under a file, not a folder: no report can go there.
    const blocked = path.join(root, 'a-file');
    fs.writeFileSync(blocked, '');
    const r = cli(
      dataDir,
      'import',
      mostlyBad,
      '--max-rejected',
      '6',
      '--report',
      path.join(blocked, 'r.csv'),
    );
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/--report: .*a-file\/r\.csv cannot be written \((ENOTDIR|EEXIST)\)/);
    expect(r.out).not.toMatch(/^Imported /);
    expect(current()).toBe(before);
    // A report it can write is left only by a run that writes one.
    const fine = path.join(root, 'reports-here', 'r.csv');
    expect(cli(own, 'import', good, '--dry-run', '--report', fine).status).toBe(0);
    expect(fs.readFileSync(fine, 'utf8')).toBe('file,line,reason,severity\n');
  });

  it('rewrites a report named with --report even when this run has nothing to report', () => {
    const report = path.join(root, 'again.csv');
    // One an older version left readable to all: rewritten, it is this account's only.
    fs.writeFileSync(report, 'old\n', { mode: 0o644 });
    fs.chmodSync(report, 0o644);
    expect(cli(dataDir, 'import', mostlyBad, '--dry-run', '--report', report).status).toBe(3);
    expect(fs.statSync(report).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(report, 'utf8').trim().split('\n')).toHaveLength(7);
    expect(cli(dataDir, 'import', good, '--dry-run', '--report', report).status).toBe(0);
    expect(fs.readFileSync(report, 'utf8')).toBe('file,line,reason,severity\n');
  });

  it('removes the staging directory a killed import left behind at the next import', () => {
    const staging = stagingRoot(dataDir);
    // A process id that cannot be running (above the kernel's maximum).
    const stale = path.join(staging, `staging-99999999-${Date.now()}`);
    fs.mkdirSync(stale, { recursive: true });
    fs.writeFileSync(path.join(stale, 'Company.tsv'), 'x');
    const r = cli(dataDir, 'import', good, '--dry-run');
    expect(r.status).toBe(0);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.readdirSync(staging)).toEqual([]);
  });
});

describe('removeStaleStaging', () => {
  it('keeps the directories of running imports and removes dead or ancient ones', () => {
    const dir = tempDir('stale-staging');
    try {
      const now = Date.now();
      const names = [
        `staging-100-${now - 1000}`, // running
        `staging-200-${now - 1000}`, // its process is gone
        `staging-100-${now - 72 * 3600_000}`, // process id reused, far too old to be an import
        'staging-not-ours',
        'graph',
      ];
      for (const n of names) fs.mkdirSync(path.join(dir, n));
      const removed = removeStaleStaging(dir, { now, isAlive: (pid) => pid === 100 });
      expect(removed.map((d) => path.basename(d)).sort()).toEqual([names[2], names[1]].sort());
      expect(fs.readdirSync(dir).sort()).toEqual([names[0], 'graph', 'staging-not-ours'].sort());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('server start', () => {
  it('loads the demo into a new store only, not into one an import emptied', async () => {
    const emptied = tempDir('emptied-by-import');
    // Both required files with their headers and no row.
    const nothing = writeImportDir(path.join(emptied, 'empty-dataset'), {
      companies: [companyRow({ vid: 'x' })],
    });
    const companies = path.join(nothing, 'companies.csv');
    fs.writeFileSync(companies, `${fs.readFileSync(companies, 'utf8').split('\n')[0]}\n`);
    const r = cli(emptied, 'import', nothing);
    expect(r.status).toBe(0);
    // Nothing worth a warning: an empty dataset is a dataset.
    expect(r.err).not.toMatch(/"level":[4-6]0|Error|failed/);
    const { log, lines } = recordingLogger();
    const t = await startTestServer(
      { DATA_DIR: emptied, SEED_DEMO: 'true', DEMO_COMPANIES: '200' },
      null,
      log,
    );
    try {
      expect((await t.running.store.stats()).companies).toBe(0);
      expect(lines.map((l) => l.msg)).toContain(
        'the store is empty, as the last import left it: the demo dataset is not loaded',
      );
    } finally {
      await t.stop();
    }
    const fresh = await startTestServer(
      { DATA_DIR: tempDir('new-store'), SEED_DEMO: 'true', DEMO_COMPANIES: '200' },
      null,
    );
    try {
      expect((await fresh.running.store.stats()).companies).toBe(200);
    } finally {
      await fresh.stop();
    }
  }, 60_000);

  it('removes the staging files of an import that was killed, in both places imports have staged', async () => {
    const dataDir = tempDir('stale-at-start');
    const stale = [
      path.join(stagingRoot(dataDir), `staging-99999999-${Date.now()}`),
      path.join(dataDir, `staging-99999998-${Date.now()}`),
    ];
    for (const d of stale) fs.mkdirSync(d, { recursive: true });
    const t = await startTestServer({ DATA_DIR: dataDir }, null);
    try {
      expect(stale.filter((d) => fs.existsSync(d))).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});

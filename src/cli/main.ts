#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { SingleBar } from 'cli-progress';
import { ConfigError, loadConfig } from '../config/env';
import type { Config } from '../config/env';
import { createLogger } from '../logger';
import { projectDir } from '../paths';
import { startServer } from '../server';
import { ApiKeyStore } from '../http/api-keys';
import { keyCallbackSecret } from '../jobs/callbacks';
import { CALLBACK_SECRET_FILE, serverCallbackSecret } from '../jobs/job-queue.options';
import { openJobsEngine } from '../jobs/open-jobs-engine';
import { RUN_ID_TEXT, RunIds } from '../jobs/run-ids';
import { MAX_GENERATED_COMPANIES, generateDataset } from '../demo/generate';
import { importDirectory, stagingRoot } from '../import/import-directory';
import { importSummary, rate } from './import-summary';
import { DEFAULT_MAX_REJECTED, ImportAbortedError } from '../import/stage-result';
import { ImportBusyError } from '../import/import-lock';
import { freeBytes, importFailureText, inputBytes, roomWarning } from '../import/disk-room';
import type { FailedImportState } from '../import/disk-room';
import type { RejectedRow } from '../import/stage-result';
import { splitStatements } from '../store/cypher-files';
import type { GraphStore, LoadAlongside } from '../store/graph-store';
import { embeddedStore, neo4jStore, openStore } from '../store/open-store';
import { EmbeddedGraphStore } from '../store/embedded/embedded.store';
import { ADMIN_ARGS_FILE, writeNeo4jAdminFiles } from '../store/neo4j/neo4j-admin-files';
import type { AdminFilesResult } from '../store/neo4j/neo4j-admin-files';
import { writePrivateFile } from '../private-files';
import { withoutCredentials } from '../domain/hosts';

/** Exit status of bad settings: environment variables and command-line arguments alike. */
const EXIT_BAD_SETTINGS = 2;

function config(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(EXIT_BAD_SETTINGS);
    }
    throw e;
  }
}

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};

/** The version of the installed package (package.json sits above src/ and dist/src/ alike). */
const version = (
  JSON.parse(fs.readFileSync(`${projectDir('', 'package.json')}/package.json`, 'utf8')) as {
    version: string;
  }
).version;

const program = new Command()
  .name('tiergraph')
  .version(version, '-V, --version', 'print the version and exit')
  .description('Supply-chain relationship data service: serve, import, generate, seed, migrate, runs, keys.')
  // Commander's own refusals (an unknown option, an argument a parser refused) end the process
  // through the catch below, with the status of bad settings; help and --version with 0.
  .exitOverride();

program
  .command('serve')
  .description('serve REST /v1, GraphQL /graphql, the explorer and docs on PORT')
  .action(async () => {
    const cfg = config();
    const log = createLogger(cfg.LOG_LEVEL);
    const running = await startServer(cfg, log);
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      running.close().then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });

interface ImportCommandOptions {
  maxRejected: number;
  report?: string;
  dryRun?: boolean;
  neo4jAdminFiles?: string;
  /** False with --no-search-index. */
  searchIndex: boolean;
}

program
  .command('import')
  .argument('<dir>', 'directory with the import CSV files (docs/import-format.md)')
  .option(
    '--max-rejected <n>',
    'import anyway when at most this many rows are rejected (0: any rejected row aborts)',
    positiveInt,
    DEFAULT_MAX_REJECTED,
  )
  .option(
    '--report <file>',
    'write every rejected row and every warning (file, line, reason, severity) to this CSV file (default: a file under DATA_DIR/reports)',
  )
  .option('--dry-run', 'validate every row and report, without touching the store')
  .option(
    '--no-search-index',
    'do not build the search index while loading (a faster embedded import, or an import into Neo4j from a ' +
      'machine whose DATA_DIR no server reads); the first start then builds it from the store',
  )
  .option(
    '--neo4j-admin-files <dir>',
    'write input files for `neo4j-admin database import full` into this empty directory instead of loading a store ' +
      '(the fast first load of a large dataset into an empty Neo4j database; README, Production)',
  )
  .description(
    'validate and bulk-load a dataset, replacing the graph; a running server switches over when done. ' +
      'Exit status: 0 imported cleanly, 1 aborted or failed (it says what changed, if anything), 2 bad settings or arguments, 3 imported with rejected rows or a dry run found some',
  )
  .action(async (dir: string, opts: ImportCommandOptions) => {
    const cfg = config();
    const log = createLogger(cfg.LOG_LEVEL);
    // The import's own lines on stdout say what it did; the stores' info lines (at the default level)
    // would land among them as JSON. A level of debug or trace asked for keeps them.
    const storeLog = log.levelVal === 30 ? log.child({}, { level: 'warn' }) : log;
    const reportFile = opts.report ?? defaultReportFile(cfg.dataDir);
    // A report named on the command line always describes this run: one with nothing to report empties it.
    const report = { file: reportFile, always: opts.report !== undefined };
    // Checked before anything is read: a report that cannot be written once the graph is replaced
    // would end a good import as a failure.
    const unwritable = cannotWrite(reportFile);
    if (unwritable !== null)
      throw new InvalidArgumentError(
        `${opts.report === undefined ? 'the report of rejected rows' : '--report'}: ${reportFile} cannot be written (${unwritable})`,
      );
    // Said of the directory itself: "companies.csv is missing" would send the user to the wrong place.
    const given = fs.statSync(dir, { throwIfNoEntry: false });
    if (!given?.isDirectory())
      throw new InvalidArgumentError(
        `${path.resolve(dir)} ${given ? 'is not a directory' : 'does not exist'}: name the directory that holds companies.csv and the other import files`,
      );
    if (opts.dryRun && opts.neo4jAdminFiles !== undefined)
      throw new InvalidArgumentError(
        '--dry-run and --neo4j-admin-files do not go together: a dry run writes nothing',
      );
    const adminDir = opts.neo4jAdminFiles === undefined ? undefined : path.resolve(opts.neo4jAdminFiles);
    if (adminDir !== undefined && fs.existsSync(adminDir) && fs.readdirSync(adminDir).length > 0)
      throw new InvalidArgumentError(
        `--neo4j-admin-files: ${adminDir} is not empty; name a new or empty directory`,
      );
    // Embedded: the store is not opened; the new graph is built beside the live one,
    // which may be in use by a server. Neo4j: the database is migrated, then upserted.
    // A dry run never opens the store.
    let store: GraphStore | null = null;
    let admin: (AdminFilesResult & { derived?: string[] }) | undefined;
    // With STORE=neo4j, the files come with what a server on this DATA_DIR and database would
    // otherwise read back from the loaded database at its first start (writeBulkLoadFiles).
    const bulk = adminDir && cfg.STORE === 'neo4j' ? neo4jStore(cfg, storeLog, false) : null;
    const adminTarget = adminDir && {
      replaceAll: async (
        stagingDir: string,
        onLoad?: (table: string, done: number, total: number) => void,
        alongside?: LoadAlongside,
      ) => {
        admin = bulk
          ? await bulk.writeBulkLoadFiles(stagingDir, adminDir, onLoad, alongside)
          : await writeNeo4jAdminFiles(stagingDir, adminDir, onLoad);
      },
    };
    if (opts.dryRun || adminDir) {
      // nothing to open
    } else if (cfg.STORE === 'neo4j') {
      store = neo4jStore(cfg, storeLog, true);
      await store.open();
    } else {
      store = embeddedStore(cfg, storeLog, 1);
    }
    // An embedded import builds the new graph beside the one served: said before minutes of work
    // where the disk is short of what it takes at its peak.
    const embedded = store instanceof EmbeddedGraphStore ? store : null;
    const input = embedded ? inputBytes(dir) : null;
    const short = input === null ? null : roomWarning(cfg.dataDir, freeBytes(cfg.dataDir), input);
    if (short) process.stderr.write(short);
    const servedBefore = embedded?.currentFile();
    let loading = false;
    const bar = new SingleBar({
      format: ' {phase} |{bar}| {value} {unit} | {rate} | {file}',
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
    });
    const started = Date.now();
    // The bar counts the rows of one file or table at a time, so its rate does too. A
    // step's first report can come after many rows, so the step is taken to start at
    // the report before it; a second pass over a file starts again from zero rows.
    let step = '';
    let stepStarted = started;
    let lastReport = started;
    let lastRows = 0;
    // The bar is drawn from the first report on: drawn before, its first line showed a phase no step has
    // and nothing done.
    let drawn = false;
    // Off a terminal each line drawn stays in the log: the first is drawn once something is done,
    // or it reads "0 rows" for the whole import.
    const logged = !process.stderr.isTTY;
    const draw = (total: number, value: number, payload: Record<string, string>) => {
      if (!drawn) {
        if (logged && value === 0) return;
        drawn = true;
        bar.start(total, value, payload);
        return;
      }
      bar.setTotal(total);
      bar.update(value, payload);
    };
    // Loading counts tables on the embedded engine (one bulk load each) and rows within a table on Neo4j.
    const loadUnit = cfg.STORE === 'neo4j' || adminTarget ? 'rows' : 'tables';
    try {
      const outcome = await importDirectory(adminTarget || store, dir, {
        workDir: stagingRoot(cfg.dataDir),
        // A dry run reads every row, so that its report lists every rejection.
        maxRejected: opts.dryRun ? Number.MAX_SAFE_INTEGER : opts.maxRejected,
        dryRun: opts.dryRun,
        // Files for Neo4j's importer come with the index only when the servers' database is known.
        searchIndex: opts.searchIndex && (!adminTarget || bulk !== null),
        // The search index built beside the load reports trouble only: its progress would break the bar's lines.
        log: log.child({}, { level: log.levelVal > 40 ? log.level : 'warn' }),
        onProgress: (p) => {
          const now = Date.now();
          if (`${p.phase}:${p.file ?? ''}` !== step || p.rows < lastRows) {
            step = `${p.phase}:${p.file ?? ''}`;
            stepStarted = lastReport;
          }
          lastReport = now;
          lastRows = p.rows;
          draw(Math.max(p.totalRowsHint ?? p.rows, p.rows, 1), p.rows, {
            phase: p.phase,
            file: p.file ?? '',
            rate: `${rate(p.rows, now - stepStarted)} rows/s`,
            unit: 'rows',
          });
        },
        onLoad: (table, done, total) => {
          loading = true;
          draw(total, done, { phase: 'load', file: table, rate: '-', unit: loadUnit });
        },
      });
      bar.stop();
      process.stdout.write(importSummary(outcome, Date.now() - started, admin !== undefined));
      reportRejected(outcome.rejected, report, outcome.warnings, outcome.warningCount);
      if (admin && adminDir) reportAdminFiles(admin, adminDir, bulk ? cfg : null);
      if (!outcome.applied) {
        const n = outcome.rejected.length;
        process.stdout.write(
          n === 0
            ? 'Dry run: no row rejected; the store was not touched.\n'
            : n > opts.maxRejected
              ? `Dry run: an import would abort (${n} rejected rows, more than --max-rejected ${opts.maxRejected}); the store was not touched.\n`
              : `Dry run: an import would go through with ${n} rejected rows (--max-rejected ${opts.maxRejected}); the store was not touched.\n`,
        );
      }
      // Rejected rows are a problem a script must notice, even when the rest went in.
      if (outcome.rejected.length > 0) process.exitCode = EXIT_REJECTED;
    } catch (e) {
      bar.stop();
      if (e instanceof ImportAbortedError) {
        process.stderr.write(`Import aborted, nothing was changed: ${e.message}\n`);
        reportRejected(e.rejected, report, e.warnings, e.warningCount);
        if (e.rejected.length > 0)
          process.stderr.write(
            `Fix the rows listed in ${reportFile}, or pass --max-rejected N to import the rest without them` +
              ` (--dry-run reports every rejected row without importing).\n`,
          );
        process.exitCode = 1;
        return;
      }
      if (e instanceof ImportBusyError) {
        process.stderr.write(`Import refused, nothing was changed: ${e.message}\n`);
        reportRejected([], report);
        process.exitCode = 1;
        return;
      }
      const state: FailedImportState = embedded
        ? embedded.currentFile() === servedBefore
          ? 'unchanged'
          : 'replaced'
        : !loading
          ? 'untouched'
          : adminDir
            ? 'unknown'
            : 'partial';
      const where = `DATA_DIR (${cfg.dataDir})${adminDir ? ` or ${adminDir}` : ''}`;
      process.stderr.write(importFailureText(e, { where, state, input }));
      process.exitCode = 1;
    } finally {
      await store?.close();
      await bulk?.close();
    }
  });

/**
 * What `import --neo4j-admin-files` wrote, and what to do with it next. `servers`: the settings of
 * the servers the derived files were written for (STORE=neo4j), or null when they were not.
 */
function reportAdminFiles(
  admin: AdminFilesResult & { derived?: string[] },
  dir: string,
  servers: Config | null,
): void {
  for (const f of admin.files)
    process.stdout.write(
      `  ${f.file}: ${f.rows.toLocaleString('en-US')} ${f.kind === 'nodes' ? 'node' : 'relationship'}${f.rows === 1 ? '' : 's'}\n`,
    );
  process.stdout.write(
    `Bulk-load files in ${dir}. With the Neo4j server stopped and its database empty, or new, run there:\n` +
      `  cd ${dir} && neo4j-admin database import full neo4j @${ADMIN_ARGS_FILE}\n` +
      'then start the server and tiergraph (STORE=neo4j): it creates the constraints and indexes on first open ' +
      '(or run `tiergraph migrate`). See the README, Production.\n',
  );
  const derived = admin.derived ?? [];
  if (servers && derived.length > 0)
    process.stdout.write(
      `Saved in ${servers.dataDir} for a server with this DATA_DIR, NEO4J_URI ${withoutCredentials(servers.NEO4J_URI ?? '')} ` +
        `and NEO4J_DATABASE ${servers.NEO4J_DATABASE}, which opens them at its first start on the loaded database ` +
        `instead of reading every company and edge back from it: ${derived.map((f) => path.basename(f)).join(', ')}.\n`,
    );
  else
    process.stdout.write(
      servers
        ? 'No search index or point-read file was saved beside the files (see the warnings above): a server builds them from the database at its first start.\n'
        : 'A server builds its search index and point-read file from the loaded database at its first start (minutes at 1M companies). ' +
            "Run this command with STORE=neo4j and the servers' DATA_DIR, NEO4J_URI and NEO4J_DATABASE to have them saved beside the files.\n",
    );
}

/** Exit status of an import that loaded the graph (or a dry run) with rejected rows. */
const EXIT_REJECTED = 3;

/** Why `file` cannot be written (made, or replaced), or null when it can; leaves no file it made. */
function cannotWrite(file: string): string | null {
  const existed = fs.existsSync(file);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    if (!existed) fs.rmSync(file, { force: true });
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

function defaultReportFile(dataDir: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return path.join(dataDir, 'reports', `import-${stamp}-rejected.csv`);
}

function reportRejected(
  rows: readonly RejectedRow[],
  { file, always }: { file: string; always: boolean },
  warnings: readonly RejectedRow[] = [],
  warningCount = warnings.length,
): void {
  const header = 'file,line,reason,severity';
  if (rows.length === 0 && warnings.length === 0) {
    if (always) writePrivateFile(file, `${header}\n`);
    return;
  }
  if (rows.length > 0) {
    process.stderr.write(`${rows.length} row(s) rejected:\n`);
    for (const r of rows.slice(0, 20)) process.stderr.write(`  ${r.file}:${r.line}: ${r.reason}\n`);
    if (rows.length > 20) process.stderr.write(`  ... and ${rows.length - 20} more\n`);
  }
  if (warningCount > 0) {
    // Not "imported": a dry run or an aborted import imports nothing, and a warning may be of a file.
    process.stderr.write(`${warningCount} warning(s), none of which rejected a row:\n`);
    for (const r of warnings.slice(0, 5)) process.stderr.write(`  ${r.file}:${r.line}: ${r.reason}\n`);
    if (warningCount > 5) process.stderr.write(`  ... and ${warningCount - 5} more\n`);
  }
  const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const line = (r: RejectedRow, severity: string) => `${q(r.file)},${r.line},${q(r.reason)},${severity}`;
  // The rejected values are the callers' data: for this account only, as export files are.
  writePrivateFile(
    file,
    [header, ...rows.map((r) => line(r, 'rejected')), ...warnings.map((r) => line(r, 'warning'))].join('\n') +
      '\n',
  );
  process.stderr.write(
    `Every rejected row and warning (file, line, reason, severity)${warningCount > warnings.length ? ` (the first ${warnings.length.toLocaleString('en-US')} warnings)` : ''}: ${file}\n`,
  );
}

program
  .command('generate')
  .requiredOption(
    '--companies <n>',
    `number of companies (2 to ${MAX_GENERATED_COMPANIES.toLocaleString('en-US')})`,
    (v: string) => {
      const n = positiveInt(v);
      if (n < 2 || n > MAX_GENERATED_COMPANIES)
        throw new InvalidArgumentError(`must be from 2 to ${MAX_GENERATED_COMPANIES}`);
      return n;
    },
  )
  .option('--seed <s>', 'random seed (same seed, same files)', positiveInt, 1)
  .requiredOption('--out <dir>', 'output directory')
  .description('write a deterministic, realistic dataset in the import format')
  .action(async (opts: { companies: number; seed: number; out: string }) => {
    const started = Date.now();
    const r = await generateDataset({ companies: opts.companies, seed: opts.seed, outDir: opts.out });
    process.stdout.write(`Generated in ${((Date.now() - started) / 1000).toFixed(1)} s into ${opts.out}:\n`);
    for (const [k, v] of Object.entries(r.counts))
      process.stdout.write(`  ${k}: ${v.toLocaleString('en-US')}\n`);
  });

program
  .command('seed')
  .argument('<files...>', 'Cypher seed files')
  .description(
    'run Cypher seed files against the store (STORE=embedded or neo4j); on Neo4j, timestamp literals and list properties written as text are translated',
  )
  .action(async (files: string[]) => {
    const cfg = config();
    const log = createLogger(cfg.LOG_LEVEL);
    const store = await openStore(cfg, log);
    try {
      for (const f of files) {
        const n = await store.runScript(splitStatements(fs.readFileSync(f, 'utf8')));
        process.stdout.write(`${f}: ${n} statements\n`);
      }
    } finally {
      await store.close();
    }
  });

program
  .command('migrate')
  .description('create missing Neo4j constraints and indexes (idempotent; the server also does it at start)')
  .action(async () => {
    const cfg = config();
    const log = createLogger(cfg.LOG_LEVEL);
    if (cfg.STORE !== 'neo4j') {
      // The embedded engine creates its tables whenever it opens a graph.
      const store = await openStore(cfg, log);
      await store.close();
      process.stdout.write(
        'STORE=embedded: the schema is created when the store opens; nothing else to do.\n',
      );
      return;
    }
    const store = neo4jStore(cfg, log, false);
    try {
      await store.open();
      const r = await store.migrate();
      process.stdout.write(
        `Neo4j ${cfg.NEO4J_DATABASE}: schema version ${r.version}, ${r.statements} constraint and index statements applied.\n`,
      );
    } finally {
      await store.close();
    }
  });

const runs = program
  .command('runs')
  .description('look up export runs in the jobs database JOBS_BACKEND names');
runs
  .command('show')
  .description(
    'print a run as the jobs database keeps it, by the run id clients see, with the number it is stored under',
  )
  .argument('<run_id>', 'a run id as the API gives it')
  .action(async (text: string) => {
    const cfg = config();
    const engine = openJobsEngine(cfg, createLogger(cfg.LOG_LEVEL));
    try {
      await engine.open?.();
      await engine.runs.open();
      // The servers' key; on a database no server has used yet, the one they will read.
      const ids = await RunIds.of(engine.runs);
      const stored = RUN_ID_TEXT.test(text) ? ids.toStored(Number(text)) : null;
      const run = stored === null ? null : await engine.runs.get(stored);
      if (!run) {
        process.stderr.write(`No run ${text} in the ${engine.runs.name} jobs database\n`);
        process.exitCode = 1;
        return;
      }
      const { runId, ...rest } = run;
      process.stdout.write(`${JSON.stringify({ run_id: text, stored_as: runId, ...rest }, null, 2)}\n`);
    } finally {
      await engine.runs.close();
      await engine.close();
    }
  });

const keys = program.command('keys').description('manage API keys stored under DATA_DIR');
keys
  .command('create')
  .option('--label <text>', 'what the key is for')
  .action((opts: { label?: string }) => {
    const cfg = config();
    const { id, key } = new ApiKeyStore(cfg.dataDir, []).create(opts.label ?? null);
    process.stdout.write(`${id}\n${key}\n(shown once; only its hash is stored)\n`);
  });
keys.command('list').action(() => {
  const cfg = config();
  const store = new ApiKeyStore(cfg.dataDir, cfg.API_KEYS);
  for (const id of store.envKeyIds()) process.stdout.write(`${id}\t-\tactive\t(API_KEYS)\n`);
  for (const k of store.readStored()) {
    process.stdout.write(
      `${k.id}\t${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}\t${k.label ?? ''}\n`,
    );
  }
});
keys
  .command('callback-secret')
  .description("print the secret a key's holder verifies its run callbacks with")
  .argument('<id>', 'a key id, as `keys list` shows it')
  .action((id: string) => {
    const cfg = config();
    const store = new ApiKeyStore(cfg.dataDir, cfg.API_KEYS);
    const stored = store.readStored().find((k) => k.id === id);
    if (!store.envKeyIds().includes(id) && (!stored || stored.revoked_at !== null)) {
      process.stderr.write(`No active key ${id}\n`);
      process.exit(1);
    }
    // The secret the servers sign with: the same setting, or the file a server generated in DATA_DIR.
    // None made here: a server with a CALLBACK_SECRET of its own would sign with another.
    const file = path.join(cfg.dataDir, CALLBACK_SECRET_FILE);
    if (cfg.CALLBACK_SECRET === undefined && !fs.existsSync(file)) {
      process.stderr.write(
        `No callback secret: set CALLBACK_SECRET as the servers have it, or DATA_DIR to that of a server that sends callbacks (one started with CALLBACK_HOSTS set makes ${file}; there is none yet)\n`,
      );
      process.exit(1);
    }
    process.stdout.write(`${keyCallbackSecret(serverCallbackSecret(cfg), id)}\n`);
  });
keys
  .command('revoke')
  .argument('<id>')
  .action((id: string) => {
    const cfg = config();
    if (!new ApiKeyStore(cfg.dataDir, []).revoke(id)) {
      process.stderr.write(`No active key ${id}\n`);
      process.exit(1);
    }
    process.stdout.write(
      `Revoked ${id}; running servers refuse it within seconds, and cancel its runs not started yet.\n`,
    );
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  // Arguments a command refused itself (two options that do not go together).
  if (e instanceof InvalidArgumentError) {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(EXIT_BAD_SETTINGS);
  }
  // Commander's own refusals, whose message it has written already; help and --version end with 0.
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : EXIT_BAD_SETTINGS);
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});

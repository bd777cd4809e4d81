import fs from 'node:fs';
import path from 'node:path';
import { makePrivate } from '../../../private-files';
import type { JobsEngine } from '../jobs-engine';
import { SqliteJobBackend } from './sqlite.agenda-backend';
import { openSqliteFile } from './sqlite.connection';
import { SqliteRunStore } from './sqlite.run-store';

/**
 * Jobs and runs in `<dataDir>/jobs/jobs.sqlite`, one connection for both. Runs hold callers' callback
 * addresses and what they exported, so the folder and the files are this account's only, as export files
 * are, also when an older version made them readable to all (its journal files included: SQLite gives
 * the mode of the database file only to those it creates). Where the account may not change a mode (a
 * volume it does not own), the files stay as they are.
 */
export function openSqliteJobsEngine(dataDir: string): JobsEngine {
  const dir = path.join(dataDir, 'jobs');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'jobs.sqlite');
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  makePrivate(dir, 0o700);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (fs.existsSync(f)) makePrivate(f, 0o600);
  const db = openSqliteFile(file);
  return {
    agendaBackend: new SqliteJobBackend({ db }),
    runs: new SqliteRunStore({ db }),
    close: () => Promise.resolve(void db.close()),
  };
}

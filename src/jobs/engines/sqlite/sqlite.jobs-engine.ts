import fs from 'node:fs';
import path from 'node:path';
import type { JobsEngine } from '../jobs-engine';
import { SqliteJobBackend } from './sqlite.agenda-backend';
import { openSqliteFile } from './sqlite.connection';
import { SqliteRunStore } from './sqlite.run-store';

/** Jobs and runs in `<dataDir>/jobs/jobs.sqlite`, one connection for both. */
export function openSqliteJobsEngine(dataDir: string): JobsEngine {
  const dir = path.join(dataDir, 'jobs');
  fs.mkdirSync(dir, { recursive: true });
  const db = openSqliteFile(path.join(dir, 'jobs.sqlite'));
  return {
    agendaBackend: new SqliteJobBackend({ db }),
    runs: new SqliteRunStore({ db }),
    close: () => Promise.resolve(void db.close()),
  };
}

import BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { openSqliteJobsEngine } from '../../src/jobs/engines/sqlite/sqlite.jobs-engine';
import { tempDir } from '../support/paths';

describe('the embedded jobs engine file', () => {
  it("makes the files an older version left readable to all this account's only, journal files included", async () => {
    const dataDir = tempDir('sqlite-jobs-modes');
    const dir = path.join(dataDir, 'jobs');
    const file = path.join(dir, 'jobs.sqlite');
    // An older version's database, in use (so its journal files exist), all readable to all.
    fs.mkdirSync(dir);
    const older = new BetterSqlite3(file);
    try {
      older.pragma('journal_mode = WAL');
      older.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
      for (const f of [dir, file, `${file}-wal`, `${file}-shm`]) fs.chmodSync(f, f === dir ? 0o755 : 0o644);
      const engine = openSqliteJobsEngine(dataDir);
      try {
        // Looked at while both are open: closing the last connection removes the journal files.
        const modes = [dir, file, `${file}-wal`, `${file}-shm`].map((f) => [
          path.basename(f),
          fs.statSync(f).mode & 0o777,
        ]);
        expect(modes).toEqual([
          ['jobs', 0o700],
          ['jobs.sqlite', 0o600],
          ['jobs.sqlite-wal', 0o600],
          ['jobs.sqlite-shm', 0o600],
        ]);
      } finally {
        await engine.close();
      }
    } finally {
      older.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts on files whose mode this account may not change, leaving them as they are', async () => {
    const dataDir = tempDir('sqlite-jobs-eperm');
    const chmod = jest.spyOn(fs, 'chmodSync').mockImplementation(() => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
    });
    try {
      const engine = openSqliteJobsEngine(dataDir);
      await engine.close();
      expect(chmod).toHaveBeenCalled();
    } finally {
      chmod.mockRestore();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

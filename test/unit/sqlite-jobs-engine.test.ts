import fs from 'node:fs';
import path from 'node:path';
import { openSqliteJobsEngine } from '../../src/jobs/engines/sqlite/sqlite.jobs-engine';
import { tempDir } from '../support/paths';

describe('the embedded jobs engine file', () => {
  it("makes the files an older version left readable to all this account's only, journal files included", async () => {
    const dataDir = tempDir('sqlite-jobs-modes');
    try {
      const dir = path.join(dataDir, 'jobs');
      fs.mkdirSync(dir, { mode: 0o755 });
      fs.chmodSync(dir, 0o755);
      // As a crashed older version left them: the database and its journal files, readable to all.
      for (const f of ['jobs.sqlite', 'jobs.sqlite-wal', 'jobs.sqlite-shm']) {
        fs.writeFileSync(path.join(dir, f), '');
        fs.chmodSync(path.join(dir, f), 0o644);
      }
      const engine = openSqliteJobsEngine(dataDir);
      await engine.close();
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      const modes = fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).mode & 0o777]);
      expect(modes.length).toBeGreaterThan(0);
      for (const [f, mode] of modes) expect([f, mode]).toEqual([f, 0o600]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

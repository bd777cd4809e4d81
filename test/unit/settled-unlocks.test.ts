import { Agenda } from 'agenda';
import { createLogger } from '../../src/logger';
import type { JobParameters } from 'agenda';
import fs from 'node:fs';
import { openJobsEngine } from '../../src/jobs/open-jobs-engine';
import { withSettledUnlocks } from '../../src/jobs/settled-unlocks';
import { tempDir } from '../support/paths';
import { recordingLogger } from '../support/server';

const WARN_LEVEL = 40;

describe('releasing a job lock Agenda does not wait for', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir('settled-unlocks');
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('fails quietly, with a warning, once the database is gone, instead of ending the process', async () => {
    const engine = openJobsEngine({ JOBS_BACKEND: 'embedded', dataDir }, createLogger('silent'));
    const job = { _id: 'j1', name: 'tierview' } as unknown as JobParameters;
    const { log, lines } = recordingLogger();
    const agenda = new Agenda({ backend: withSettledUnlocks(engine.agendaBackend, log) });
    await agenda.ready;
    // A shutdown closes the database while Agenda may still let a job go.
    await engine.close();
    await expect(engine.agendaBackend.repository.unlockJob(job)).rejects.toThrow();
    // Agenda's own call, the one it makes without waiting for it.
    await expect(agenda.db.unlockJob(job)).resolves.toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({
        level: WARN_LEVEL,
        msg: 'a job lock was not released; it lapses on its own',
      }),
    ]);
  });

  it('leaves every other part of the backend as it was', async () => {
    const engine = openJobsEngine({ JOBS_BACKEND: 'embedded', dataDir }, createLogger('silent'));
    const { log, lines } = recordingLogger();
    try {
      const backend = withSettledUnlocks(engine.agendaBackend, log);
      expect(backend.name).toBe(engine.agendaBackend.name);
      const agenda = new Agenda({ backend, processEvery: 60_000 });
      agenda.define('nothing', () => undefined);
      const saved = await agenda.now('nothing');
      const [found] = await agenda.queryJobs({ name: 'nothing' }).then((r) => r.jobs);
      expect(String(found?._id)).toBe(String(saved.attrs._id));
      await expect(agenda.db.unlockJob(saved.attrs)).resolves.toBeUndefined();
      expect(lines).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});

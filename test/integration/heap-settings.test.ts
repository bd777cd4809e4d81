import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { importDirectory } from '../../src/import/import-directory';
import { ROOT, tempDir } from '../support/paths';
import { startTestServer } from '../support/server';

// Pretenuring put the row objects of a first start's full reads, and of an import's staging,
// straight in the old generation: 3.5 GiB at 1M companies against 2.8 without it, and an import
// 5–20% slower (bench/README.md, "Cold starts" and "Latest figures").
describe('allocation-site pretenuring', () => {
  let flags: jest.SpyInstance;
  beforeEach(() => {
    flags = jest.spyOn(v8, 'setFlagsFromString');
  });
  afterEach(() => flags.mockRestore());

  it('is turned off by a serving process when it starts', async () => {
    const t = await startTestServer({}, null);
    try {
      expect(flags).toHaveBeenCalledWith('--no-allocation-site-pretenuring');
      expect((await t.get('/healthz')).status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  it('is turned off by an import, a dry run included', async () => {
    const dir = tempDir('heap-settings');
    try {
      const outcome = await importDirectory(null, path.join(ROOT, 'test', 'fixtures', 'import', 'tiny'), {
        workDir: dir,
        dryRun: true,
      });
      expect(flags).toHaveBeenCalledWith('--no-allocation-site-pretenuring');
      expect(outcome.applied).toBe(false);
      expect(outcome.counts.Company).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import v8 from 'node:v8';
import { startTestServer } from '../support/server';

describe('a serving process', () => {
  it('turns allocation-site pretenuring off when it starts', async () => {
    // Pretenuring put the row objects of a first start's full reads straight in the old
    // generation: 3.5 GiB at 1M companies against 2.8 without it (bench/README.md, "Cold starts").
    const flags = jest.spyOn(v8, 'setFlagsFromString');
    try {
      const t = await startTestServer({}, null);
      try {
        expect(flags).toHaveBeenCalledWith('--no-allocation-site-pretenuring');
        expect((await t.get('/healthz')).status).toBe(200);
      } finally {
        await t.stop();
      }
    } finally {
      flags.mockRestore();
    }
  });
});

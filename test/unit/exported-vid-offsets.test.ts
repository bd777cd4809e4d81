import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportedVidOffsets } from '../../src/store/exported-vid-offsets';

describe('exportedVidOffsets', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-vid-offsets-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('maps each offset to its vid, in either column order, whatever the block size', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => [499 - i, `c${i.toString(36)}é`] as const);
    const byOff = write('a.csv', `off\tvid\n${lines.map(([o, v]) => `${o}\t${v}`).join('\n')}\n`);
    const byVid = write('b.csv', `vid\toff\n${lines.map(([o, v]) => `${v}\t${o}`).join('\n')}`);
    const expected: string[] = [];
    for (const [o, v] of lines) expected[o] = v;
    for (const file of [byOff, byVid])
      for (const size of [1, 13, 4096, 1 << 20]) {
        let blocks = 0;
        const got = await exportedVidOffsets(file, () => blocks++, size);
        expect(got).toEqual(expected);
        // A block a turn: a small one gives the event loop many, a large one the file and its end.
        if (size === 13) expect(blocks).toBeGreaterThan(100);
        if (size === 1 << 20) expect(blocks).toBe(2);
      }
  });

  it('leaves an offset no line gives a hole, and a company without a vid as the empty text', async () => {
    const got = await exportedVidOffsets(write('holes.csv', 'off\tvid\n0\tc0\n3\t\n2\tc2\n'));
    expect(got).toHaveLength(4);
    expect(1 in got).toBe(false);
    expect(got[0]).toBe('c0');
    expect(got[2]).toBe('c2');
    expect(got[3]).toBe('');
  });

  it('gives an empty map for a file of the header alone', async () => {
    expect(await exportedVidOffsets(write('empty.csv', 'off\tvid\n'))).toEqual([]);
  });

  it.each([
    ['no header', '', /does not hold the columns off and vid/],
    ['other columns', 'id\tvid\n0\tc0\n', /does not hold the columns off and vid/],
    ['a third column', 'off\tvid\tname\n0\tc0\tx\n', /does not hold the columns off and vid/],
    ['a quoted value', 'off\tvid\n0\t\u0001c\tx\u0001\n', /quoted value/],
    ['a line of one field', 'off\tvid\n0\tc0\n1\n', /line of 1 fields, not 2/],
    ['an offset that is not a number', 'off\tvid\n0\tc0\n1x\tc1\n', /"1x" is not an offset/],
    ['an empty offset', 'off\tvid\n\tc0\n', /"" is not an offset/],
    ['a negative offset', 'off\tvid\n-1\tc0\n', /"-1" is not an offset/],
    ['an offset past the safe integers', 'off\tvid\n99999999999999999999\tc0\n', /is not an offset/],
  ])('refuses a file with %s', async (name, text, message) => {
    await expect(exportedVidOffsets(write(`bad-${name.replace(/ /g, '-')}.csv`, text))).rejects.toThrow(
      message,
    );
  });

  it('stops when the check after a block throws', async () => {
    const file = write(
      'stop.csv',
      `off\tvid\n${Array.from({ length: 100 }, (_, i) => `${i}\tc${i}`).join('\n')}\n`,
    );
    let blocks = 0;
    const stop = new Error('stopped');
    await expect(
      exportedVidOffsets(
        file,
        () => {
          if (++blocks === 2) throw stop;
        },
        32,
      ),
    ).rejects.toBe(stop);
    expect(blocks).toBe(2);
  });
});

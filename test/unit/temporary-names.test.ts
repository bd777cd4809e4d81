import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { temporaryFor } from '../../src/store/file-io';
import { tempDir } from '../support/paths';

/** A process id that no process holds now: one that has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid;
}

describe('temporaryFor', () => {
  it('names a file with the suffix asked for last, and removes what ended processes left under such names', () => {
    const dir = tempDir('temporary-names');
    const file = path.join(dir, 'search-rows');
    const ended = endedPid();
    // Left by a process that ended, by this one, and by one still running (the parent of jest's worker).
    const left = [`search-rows.tmp-${ended}.csv`, `search-rows.tmp-${process.pid}.csv`];
    const running = `search-rows.tmp-${process.ppid}.csv`;
    const others = ['search-rows.tmp-12.json', 'search-rows.csv', `search-rows.tmp-${ended}`];
    for (const name of [...left, running, ...others]) fs.writeFileSync(path.join(dir, name), 'x');

    expect(temporaryFor(file, '.csv')).toBe(`${file}.tmp-${process.pid}.csv`);

    const after = fs.readdirSync(dir).sort();
    // Names of other suffixes (or none) are other files' temporaries, and are left alone.
    expect(after).toEqual([running, ...others].sort());
  });

  it('goes on naming files without a suffix as before', () => {
    const dir = tempDir('temporary-names');
    const file = path.join(dir, 'index');
    const ended = endedPid();
    fs.writeFileSync(path.join(dir, `index.tmp-${ended}`), 'x');
    fs.writeFileSync(path.join(dir, `index.tmp-${process.ppid}`), 'x');
    expect(temporaryFor(file)).toBe(`${file}.tmp-${process.pid}`);
    expect(fs.readdirSync(dir)).toEqual([`index.tmp-${process.ppid}`]);
  });

  it('gives unique names on asking, keeps this process’s own, and removes those of ended processes', () => {
    const dir = tempDir('temporary-names');
    const file = path.join(dir, 'search-rows');
    const ended = endedPid();
    fs.writeFileSync(path.join(dir, `search-rows.tmp-${ended}-3.csv`), 'x');
    const first = temporaryFor(file, '.csv', true);
    fs.writeFileSync(first, 'in use');
    const second = temporaryFor(file, '.csv', true);
    expect(first).toMatch(new RegExp(`search-rows\\.tmp-${process.pid}-\\d+\\.csv$`));
    expect(second).not.toBe(first);
    // The first is still being written or read: the second name's cleanup leaves it.
    expect(fs.readdirSync(dir)).toEqual([path.basename(first)]);
  });

  it('removes a unique name of this process’s pid that it did not hand out (an ended process of the same pid)', () => {
    const dir = tempDir('temporary-names');
    const file = path.join(dir, 'edge-rows');
    // As in a container, where every start is pid 1: left by an earlier start cut short.
    const leftBefore = `edge-rows.tmp-${process.pid}-999999.csv`;
    fs.writeFileSync(path.join(dir, leftBefore), 'x');
    const first = temporaryFor(file, '.csv', true);
    expect(path.basename(first)).not.toBe(leftBefore);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

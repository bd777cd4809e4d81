import fs from 'node:fs';
import path from 'node:path';
import {
  IMPORT_ROOM_FACTOR,
  formatBytes,
  freeBytes,
  importFailureText,
  importRoom,
  inputBytes,
  roomWarning,
} from '../../src/import/disk-room';
import { isDiskFull } from '../../src/disk-full';
import { tempDir } from '../support/paths';

/** An error as Node's file calls make it, with its code. */
function fsError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** The embedded engine's own refusal, which carries no code. */
const engineFull = new Error(
  'IO exception: Cannot write to file. path: /d/graph/g-000002.kuzu fileDescriptor: 22 offsetToWrite: 10743808 ' +
    'numBytesToWrite: 4096 numBytesWritten: -1. Error: No space left on device',
);

describe('room on disk for an import', () => {
  let dir: string;
  beforeAll(() => (dir = tempDir('disk-room')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('counts the CSV files of an import directory only', () => {
    const input = path.join(dir, 'input');
    fs.mkdirSync(path.join(input, 'nested.csv'), { recursive: true });
    fs.writeFileSync(path.join(input, 'companies.csv'), 'x'.repeat(1000));
    fs.writeFileSync(path.join(input, 'evidence.csv'), 'y'.repeat(234));
    fs.writeFileSync(path.join(input, 'notes.txt'), 'z'.repeat(5000));
    expect(inputBytes(input)).toBe(1234);
    // A file linked in is read by the import as the file it links to.
    const elsewhere = path.join(dir, 'relationships.csv');
    fs.writeFileSync(elsewhere, 'w'.repeat(100));
    fs.symlinkSync(elsewhere, path.join(input, 'relationships.csv'));
    fs.symlinkSync(path.join(dir, 'nowhere.csv'), path.join(input, 'aliases.csv'));
    expect(inputBytes(input)).toBe(1334);
  });

  it('gives the room free on the file system of a directory not made yet', () => {
    const asked = jest.spyOn(fs, 'statfsSync');
    try {
      const free = freeBytes(path.join(dir, 'not', 'made', 'yet'));
      // The nearest directory that is there answers, in bytes an unprivileged writer may write.
      const at = asked.mock.calls.map(([p]) => String(p));
      expect(at[at.length - 1]).toBe(path.resolve(dir));
      const answer = asked.mock.results[asked.mock.results.length - 1]!.value as fs.StatsFs;
      expect(free).toBe(answer.bavail * answer.bsize);
      expect(free).toBeGreaterThan(0);
    } finally {
      asked.mockRestore();
    }
  });

  it('writes sizes as a reader takes them in', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(3_400_000)).toBe('3.4 MB');
    expect(formatBytes(12_206_100_000)).toBe('12 GB');
    expect(formatBytes(2_100_000_000)).toBe('2.1 GB');
    // Rounded as shown: never 1000 of a unit.
    expect(formatBytes(999_950_000)).toBe('1.0 GB');
    expect(formatBytes(999_949)).toBe('1.0 MB');
    expect(formatBytes(999_400)).toBe('999 kB');
    expect(formatBytes(999)).toBe('999 B');
  });

  it('warns only when the disk has less free than the import takes at its peak', () => {
    const input = 2_100_000_000;
    expect(importRoom(input)).toBe(input * IMPORT_ROOM_FACTOR);
    expect(roomWarning('/data', importRoom(input), input)).toBeNull();
    expect(roomWarning('/data', null, input)).toBeNull();
    const w = roomWarning('/data', 3_100_000_000, input);
    expect(w).toBe(
      'Warning: 3.1 GB free under DATA_DIR (/data); an import of 2.1 GB of files needs about 13 GB there at its ' +
        'peak (the new graph and its derived files are built beside the one served). It may fail for want of ' +
        'room; free some, or set DATA_DIR to a larger disk.\n',
    );
  });

  it("knows a disk that is full by Node's codes and by the engine's words", () => {
    expect(isDiskFull(fsError('ENOSPC', 'no space left on device, write'))).toBe(true);
    expect(isDiskFull(fsError('EDQUOT', 'disk quota exceeded, write'))).toBe(true);
    expect(isDiskFull(engineFull)).toBe(true);
    expect(isDiskFull(fsError('EACCES', 'permission denied, open'))).toBe(false);
    expect(isDiskFull(new Error('Binder exception: table Company does not exist'))).toBe(false);
    expect(isDiskFull('No space left on device')).toBe(false);
  });

  it('says what failed, what an import needs when the disk was full, and where the store stands', () => {
    const where = 'DATA_DIR (/data)';
    expect(importFailureText(engineFull, { where, state: 'unchanged', input: 41_000_000 })).toBe(
      `Import failed: ${engineFull.message}\n` +
        'The disk ran out of room under DATA_DIR (/data). An import of these files needs about 246 MB there at ' +
        'its peak. Free some, or set DATA_DIR to a larger disk, and import again.\n' +
        'Nothing was changed: the graph served is the one before this import.\n',
    );
    // Neo4j: changed in place, and no room known beyond the staging.
    const partial = importFailureText(fsError('ENOSPC', 'no space left on device, write'), {
      where,
      state: 'partial',
      input: null,
    });
    expect(partial).toContain('The disk ran out of room under DATA_DIR (/data). Free some');
    expect(partial).toMatch(/\nThe store may hold part of these files now: importing them again completes/);
    expect(
      importFailureText(new Error('Neo.ClientError.Security.Unauthorized '), {
        where,
        state: 'untouched',
        input: null,
      }),
    ).toBe(
      'Import failed: Neo.ClientError.Security.Unauthorized\nNothing was changed: the store was not touched.\n',
    );
    expect(importFailureText(new Error('boom'), { where, state: 'replaced', input: 1 })).toBe(
      'Import failed: boom\nThe new graph is in place; what failed came after.\n',
    );
    expect(importFailureText('odd', { where, state: 'unknown', input: null })).toBe('Import failed: odd\n');
  });
});

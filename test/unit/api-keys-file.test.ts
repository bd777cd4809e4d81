import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiKeyStore } from '../../src/http/api-keys';

let dir: string;
let file: string;
let lock: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-keys-file-'));
  file = path.join(dir, 'api-keys.json');
  lock = `${file}.lock`;
});
afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the key file lock', () => {
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid;
  const age = (f: string, s: number) => {
    const t = new Date(Date.now() - s * 1000);
    fs.utimesSync(f, t, t);
  };

  it('breaks a lock left by a process that is gone', () => {
    fs.writeFileSync(lock, `${deadPid()} ${os.hostname()} left-behind\n`);
    age(lock, 60);
    const keys = new ApiKeyStore(dir, [], { lockWaitMs: 2000 });
    const { id } = keys.create('a');
    expect(keys.readStored().map((k) => k.id)).toEqual([id]);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('waits for a lock whose holder runs, then gives up naming the lock file', () => {
    // The test runner's parent process: running, and not this one.
    fs.writeFileSync(lock, `${process.ppid} ${os.hostname()} held\n`);
    age(lock, 60);
    const keys = new ApiKeyStore(dir, [], { lockWaitMs: 300 });
    const started = Date.now();
    expect(() => keys.create('a')).toThrow(lock);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(keys.readStored()).toEqual([]);
    expect(fs.readFileSync(lock, 'utf8')).toContain('held');
  });
});

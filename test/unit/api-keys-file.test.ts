import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
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

describe('key ids', () => {
  it('draws again when a new id is already taken, since runs belong to the id', () => {
    const { randomBytes } = crypto;
    const real = (n: number): Buffer => randomBytes(n);
    let draws = 0;
    // The first two draws of an id give the same bytes, later ones random (keys: 32 bytes).
    const spy = jest.spyOn(crypto, 'randomBytes') as unknown as jest.SpyInstance<Buffer, [number]>;
    spy.mockImplementation((n) => (n < 32 && draws++ < 2 ? Buffer.alloc(n, 7) : real(n)));
    const keys = new ApiKeyStore(dir, []);
    const a = keys.create('a');
    const b = keys.create('b');
    expect(a.id).not.toBe(b.id);
    expect(b.id).toMatch(/^key-[0-9a-f]{16}$/);
    expect(keys.readStored().map((k) => k.id)).toEqual([a.id, b.id]);
    expect(keys.check(b.key)).toEqual({ ok: true, id: b.id });
  });
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

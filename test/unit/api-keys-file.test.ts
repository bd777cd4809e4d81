import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiKeyStore, envKeyId } from '../../src/http/api-keys';
import { keyCallbackSecret } from '../../src/jobs/callbacks';
import { loadOrCreateSecret } from '../../src/secrets';
import { runCli } from '../support/cli';

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

describe('a malformed key file', () => {
  const log = () => ({ error: jest.fn(), warn: jest.fn() });

  it('keeps the keys read before, says so at most once a minute, and applies the file once fixed', () => {
    let clock = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
    const logged = log();
    const keys = new ApiKeyStore(dir, [], { log: logged });
    const a = keys.create('a');
    const b = keys.create('b');
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, '{"keys": [');
    clock += 3000;
    expect(keys.check(a.key)).toEqual({ ok: true, id: a.id });
    expect(logged.error).toHaveBeenCalledTimes(1);
    const [fields, msg] = logged.error.mock.calls[0] as [{ err: Error }, string];
    expect(`${msg} ${fields.err.message}`).toContain(file);
    expect(fields.err.message).toMatch(/JSON/);
    // Still bad: read again on later requests, but not logged again within the minute.
    for (let i = 0; i < 5; i++) {
      clock += 3000;
      expect(keys.check(b.key)).toEqual({ ok: true, id: b.id });
    }
    expect(logged.error).toHaveBeenCalledTimes(1);
    clock += 60_000;
    expect(keys.check(b.key)).toEqual({ ok: true, id: b.id });
    expect(logged.error).toHaveBeenCalledTimes(2);
    // Fixed, with b revoked meanwhile: applied at the next request.
    const fixed = JSON.parse(good) as { keys: { id: string; revoked_at: string | null }[] };
    fixed.keys.find((k) => k.id === b.id)!.revoked_at = new Date().toISOString();
    fs.writeFileSync(file, JSON.stringify(fixed));
    clock += 3000;
    expect(keys.check(b.key)).toEqual({ ok: false, reason: 'revoked' });
    expect(keys.check(a.key)).toEqual({ ok: true, id: a.id });
    expect(logged.error).toHaveBeenCalledTimes(2);
  });

  it('is refused, naming the file, by anything that would write or list it', () => {
    const keys = new ApiKeyStore(dir, []);
    const { id } = keys.create('a');
    for (const text of ['{"keys": [', '{"keys": [{"id": "key-1", "sha256": "zz"}]}', '[]']) {
      fs.writeFileSync(file, text);
      expect(() => keys.create('b')).toThrow(file);
      expect(() => keys.revoke(id)).toThrow(file);
      expect(() => new ApiKeyStore(dir, [])).toThrow(file);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    }
  });

  it('makes the keys commands end with an error naming the file', () => {
    fs.writeFileSync(file, '{"keys": [');
    for (const args of [
      ['keys', 'list'],
      ['keys', 'create'],
    ]) {
      const r = runCli(args, { DATA_DIR: dir, LOG_LEVEL: 'warn' }, 30_000);
      expect([args, r.status]).toEqual([args, 1]);
      expect(r.err).toContain(file);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('{"keys": [');
  }, 60_000);
});

describe('keys callback-secret', () => {
  it("prints an active key's callback secret, from the server's secret, for API_KEYS keys too", () => {
    const keys = new ApiKeyStore(dir, []);
    const a = keys.create('a');
    const b = keys.create('b');
    keys.revoke(b.id);
    const envKey = 'an-api-keys-key-0123456789';
    const env = { DATA_DIR: dir, API_KEYS: envKey, LOG_LEVEL: 'warn' };
    const listed = runCli(['keys', 'list'], env, 30_000);
    expect(listed.status).toBe(0);
    const envId = envKeyId(envKey);
    expect(listed.out.split('\n').map((l) => l.split('\t')[0])).toEqual([envId, a.id, b.id, '']);
    // Before any server generated its secret, none is made up: a server with a setting of its own would differ.
    const early = runCli(['keys', 'callback-secret', a.id], env, 30_000);
    expect([early.status, early.out]).toEqual([1, '']);
    expect(early.err).toContain('No callback secret: set CALLBACK_SECRET');
    expect(fs.existsSync(path.join(dir, 'callback-secret'))).toBe(false);
    // The server's secret as a server finds it: generated into DATA_DIR once, or the setting.
    const server = loadOrCreateSecret(dir, 'callback-secret');
    const ofA = runCli(['keys', 'callback-secret', a.id], env, 30_000);
    expect(ofA.status).toBe(0);
    expect(ofA.out).toBe(`${keyCallbackSecret(server, a.id)}\n`);
    const ofEnv = runCli(['keys', 'callback-secret', envId], env, 30_000);
    expect(ofEnv.out).toBe(`${keyCallbackSecret(server, envId)}\n`);
    const set = runCli(
      ['keys', 'callback-secret', a.id],
      { ...env, CALLBACK_SECRET: 'x'.repeat(40) },
      30_000,
    );
    expect(set.out).toBe(`${keyCallbackSecret('x'.repeat(40), a.id)}\n`);
    for (const id of [b.id, 'key-0000000000000000']) {
      const r = runCli(['keys', 'callback-secret', id], env, 30_000);
      expect([id, r.status, r.out, r.err]).toEqual([id, 1, '', `No active key ${id}\n`]);
    }
  }, 120_000);
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

describe('a secret kept under DATA_DIR', () => {
  it('is made once, whole, and kept; an empty one is refused rather than signed with', () => {
    const made = loadOrCreateSecret(dir, 'some-secret');
    expect(made).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(loadOrCreateSecret(dir, 'some-secret')).toBe(made);
    expect(fs.readdirSync(dir)).toEqual(['some-secret']);
    expect(fs.statSync(path.join(dir, 'some-secret')).mode & 0o777).toBe(0o600);
    fs.writeFileSync(path.join(dir, 'empty-secret'), '\n');
    expect(() => loadOrCreateSecret(dir, 'empty-secret')).toThrow(
      `${path.join(dir, 'empty-secret')} is empty`,
    );
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiKeyStore } from '../../src/http/api-keys';

describe('API_KEYS ids', () => {
  const a = 'first-key-0123456789abcdef';
  const b = 'second-key-0123456789abcdef';
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-keys-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const idOf = (keys: ApiKeyStore, key: string): string => {
    const r = keys.check(key);
    if (!r.ok) throw new Error(`key refused: ${r.reason}`);
    return r.id;
  };

  it('keeps each key its id when API_KEYS is reordered, since runs are owned by the id', () => {
    const before = new ApiKeyStore(dir, [a, b]);
    const after = new ApiKeyStore(dir, [b, a]);
    expect(idOf(after, a)).toBe(idOf(before, a));
    expect(idOf(after, b)).toBe(idOf(before, b));
    expect(idOf(before, a)).not.toBe(idOf(before, b));
  });

  it('gives ids that do not contain the key', () => {
    const id = idOf(new ApiKeyStore(dir, [a]), a);
    expect(id).toMatch(/^env-[0-9a-f]{16}$/);
    expect(id).not.toContain(a);
  });
});

describe('ApiKeyStore.check', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-keys-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses a key accepted a moment before as soon as it is revoked', () => {
    const keys = new ApiKeyStore(dir, []);
    const { id, key } = keys.create('analyst');
    expect(keys.check(key)).toEqual({ ok: true, id });
    expect(keys.check(key)).toEqual({ ok: true, id });
    expect(keys.revoke(id)).toBe(true);
    expect(keys.check(key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('refuses a key revoked by another process once it reads the key file again', () => {
    const keys = new ApiKeyStore(dir, []);
    const { id, key } = keys.create(null);
    expect(keys.check(key)).toEqual({ ok: true, id });
    // Another process (the CLI) revokes it; this one reads the file again (as it does within 2 s).
    expect(new ApiKeyStore(dir, []).revoke(id)).toBe(true);
    keys.reload();
    expect(keys.check(key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('accepts only the exact key', () => {
    const keys = new ApiKeyStore(dir, ['only-key-0123456789abcdef']);
    expect(keys.check('only-key-0123456789abcdef').ok).toBe(true);
    expect(keys.check('only-key-0123456789abcdeF')).toEqual({ ok: false, reason: 'unknown' });
    expect(keys.check('only-key-0123456789abcde')).toEqual({ ok: false, reason: 'unknown' });
    expect(keys.check(undefined)).toEqual({ ok: false, reason: 'missing' });
  });
});

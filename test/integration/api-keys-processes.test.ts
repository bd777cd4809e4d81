import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ApiKeyStore } from '../../src/http/api-keys';
import type { StoredKey } from '../../src/http/api-keys';
import { ROOT, tempDir } from '../support/paths';

/** Runs api-keys.child.ts processes side by side, released together; resolves with what each did. */
async function together(dataDir: string, commands: string[][]): Promise<string[][]> {
  const children = commands.map((args) =>
    spawn(
      process.execPath,
      [
        '-r',
        path.join(ROOT, 'test/support/ts-register.js'),
        path.join(ROOT, 'test/support/api-keys.child.ts'),
        dataDir,
        ...args,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    ),
  );
  const outputs = children.map((child) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (out.startsWith('ready\n')) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
      child.once('exit', () => {
        clearInterval(poll);
        reject(new Error(`exited before it was ready: ${err}`));
      });
    });
    const done = new Promise<string[]>((resolve, reject) =>
      child.once('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(out.slice('ready\n'.length)) as string[])
          : reject(new Error(`exited with ${String(code)}: ${err}`)),
      ),
    );
    return { ready, done };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const child of children) child.stdin.write('go\n');
  // All of them ended before anything is judged, so that none still writes when the test cleans up.
  const ended = await Promise.allSettled(outputs.map((o) => o.done));
  return ended.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  });
}

describe('the key file written by several processes at once', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = tempDir('keys-race');
    dir = path.join(root, 'data');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const stored = (): StoredKey[] => new ApiKeyStore(dir, []).readStored();

  it('keeps every key created and every revocation reported, whatever runs beside them', async () => {
    const keys = new ApiKeyStore(dir, []);
    const toRevoke = Array.from({ length: 30 }, () => keys.create('to revoke').id);
    const [a, b, revoked] = await together(dir, [
      ['create', '120'],
      ['create', '120'],
      ['revoke', ...toRevoke],
    ]);
    expect(revoked).toEqual(toRevoke);
    const file = new Map(stored().map((k) => [k.id, k]));
    for (const id of [...a!, ...b!]) expect(file.get(id)?.revoked_at).toBe(null);
    for (const id of revoked!) expect(file.get(id)?.revoked_at).toEqual(expect.any(String));
    expect(file.size).toBe(30 + 240);
    // Nothing left behind beside it but the file itself, readable by this account only.
    expect(fs.readdirSync(dir)).toEqual(['api-keys.json']);
    expect(fs.statSync(path.join(dir, 'api-keys.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  }, 20_000);
});

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, logAtMostEvery } from '../logger';
import type { Logger } from '../logger';
import { temporaryFor } from '../store/file-io';
import { breakLock, createLock, lockIsStale, readLock, releaseLock } from '../lock-file';
import type { LockHolder } from '../lock-file';

/** A stored key: only its SHA-256 is kept, so a leaked file does not leak keys. */
export interface StoredKey {
  id: string;
  sha256: string;
  created_at: string;
  revoked_at: string | null;
  label: string | null;
}

export type KeyCheck = { ok: true; id: string } | { ok: false; reason: 'missing' | 'unknown' | 'revoked' };

const FILE = 'api-keys.json';
/** How long a change waits for another process's change to the key file before giving up. */
const LOCK_WAIT_MS = 10_000;
/**
 * A change holds the lock for milliseconds. A lock whose holder on this machine no longer runs is
 * broken at once; one written on another machine (a shared DATA_DIR), where process ids say nothing
 * here, or naming no holder, once it is this old.
 */
const STALE_LOCK_MS = 120_000;

/** While the key file stays unreadable, a server says so this often. */
const BAD_FILE_LOG_MS = 60_000;

export interface ApiKeyStoreOptions {
  /** How long create and revoke wait for the key file's lock (tests shorten it). */
  lockWaitMs?: number;
  /** Where a server says that the key file cannot be read; by default a logger of its own. */
  log?: Pick<Logger, 'warn' | 'error'>;
}

/** The key file cannot be read or is not a key file; the message names it and says what is wrong. */
export class KeyFileError extends Error {}

const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest();

/** Creates a new random key: 32 bytes, URL-safe base64, prefixed so it is recognisable. */
export function newKey(): string {
  return `tg_${crypto.randomBytes(32).toString('base64url')}`;
}

/**
 * The keys the service accepts: those in API_KEYS and those in
 * `<dataDir>/api-keys.json`. Checks hash the presented key and compare it with
 * every accepted hash in constant time, so timing tells nothing about keys.
 */
/**
 * The id of a key given in API_KEYS. Runs are owned by the key id, so it comes from the key itself (a
 * prefix of its hash, which reveals nothing usable), not from its place in the setting: reordering
 * API_KEYS must not hand one key's runs to another.
 */
export function envKeyId(key: string): string {
  return `env-${sha256(key).toString('hex').slice(0, 16)}`;
}

export class ApiKeyStore {
  private entries: { id: string; hash: Buffer; revoked: boolean }[] = [];
  /**
   * The answers of checks that accepted a key since the keys were last read, by the text presented:
   * a request with a key accepted before skips hashing it (about 3% of a profile read's CPU). Only
   * a text equal to an accepted key gets in, so it holds at most one entry per key, and it is
   * emptied whenever the keys are read again: a revocation takes effect as before. Any other text is
   * still hashed and compared with every key in constant time.
   */
  private accepted = new Map<string, KeyCheck>();
  private fileStamp = '';
  private checkedAt = 0;

  private readonly lockWaitMs: number;
  private readonly logBadFile: (err: unknown, msg: string) => void;
  /** The text of the lock this store holds while it changes the file. */
  private heldLock: string | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly envKeys: readonly string[],
    opts: ApiKeyStoreOptions = {},
  ) {
    this.lockWaitMs = opts.lockWaitMs ?? LOCK_WAIT_MS;
    this.logBadFile = logAtMostEvery(BAD_FILE_LOG_MS, opts.log ?? defaultLog(), 'error');
    // Unlike a reload, throws on a file that cannot be read: with no keys read before, there is
    // nothing to go on with, and a server or `tiergraph keys` stops naming the file.
    this.load();
  }

  get file(): string {
    return path.join(this.dataDir, FILE);
  }

  /** The lock file beside the key file, held by the one process changing it. */
  get lockFile(): string {
    return `${this.file}.lock`;
  }

  /** The ids of the keys given in API_KEYS, in its order. */
  envKeyIds(): string[] {
    return this.envKeys.map(envKeyId);
  }

  /** The keys in the file (none when there is no file); throws KeyFileError when it is not a key file. */
  readStored(): StoredKey[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new KeyFileError(`cannot read ${this.file}: ${(err as Error).message}`);
    }
    return parseKeyFile(this.file, text);
  }

  /**
   * Reads the keys again. A file that cannot be read (edited by hand and left malformed, say) leaves
   * the keys read before in use, and is logged and read again at later requests until it is fixed:
   * the file's stamp is recorded only once it has been read.
   */
  reload(): void {
    try {
      this.load();
    } catch (err) {
      if (!(err instanceof KeyFileError)) throw err;
      this.logBadFile(err, `the API keys in ${this.file} cannot be read; those read before stay in use`);
    }
  }

  private load(): void {
    const stamp = this.stamp();
    const stored = this.readStored();
    this.fileStamp = stamp;
    this.accepted = new Map();
    this.entries = [
      ...this.envKeys.map((k) => ({ id: envKeyId(k), hash: sha256(k), revoked: false })),
      ...stored.map((k) => ({
        id: k.id,
        hash: Buffer.from(k.sha256, 'hex'),
        revoked: k.revoked_at !== null,
      })),
    ];
  }

  /** Whether any usable key exists (settings or file). */
  get hasActiveKey(): boolean {
    return this.entries.some((e) => !e.revoked);
  }

  /** Keys created or revoked by the CLI reach a running server within a few seconds. */
  private refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < 2000) return;
    this.checkedAt = now;
    if (this.stamp() !== this.fileStamp) this.reload();
  }

  private stamp(): string {
    try {
      const st = fs.statSync(this.file);
      return `${st.mtimeMs}:${st.size}`;
    } catch {
      return '';
    }
  }

  /** Whether the key of this id is revoked; false for an id this store does not hold. */
  revoked(id: string): boolean {
    this.refresh();
    return this.entries.some((e) => e.id === id && e.revoked);
  }

  check(presented: string | undefined): KeyCheck {
    if (!presented) return { ok: false, reason: 'missing' };
    this.refresh();
    const known = this.accepted.get(presented);
    if (known) return known;
    const hash = sha256(presented);
    let found: { id: string; revoked: boolean } | null = null;
    for (const e of this.entries) {
      if (crypto.timingSafeEqual(e.hash, hash) && !found) found = e;
    }
    if (!found) return { ok: false, reason: 'unknown' };
    if (found.revoked) return { ok: false, reason: 'revoked' };
    const ok: KeyCheck = { ok: true, id: found.id };
    this.accepted.set(presented, ok);
    return ok;
  }

  /** Adds a key to the file and returns it in clear: the only time it is shown. */
  create(label: string | null = null): { id: string; key: string } {
    const key = newKey();
    const id = this.locked(() => {
      const stored = this.readStored();
      // Runs belong to a key id, so a new key must not get one in use (or revoked: its runs stay).
      // 8 random bytes make a clash all but impossible; drawn again anyway, under the lock.
      const taken = new Set(stored.map((k) => k.id));
      let id: string;
      do id = `key-${crypto.randomBytes(8).toString('hex')}`;
      while (taken.has(id));
      stored.push({
        id,
        sha256: sha256(key).toString('hex'),
        created_at: new Date().toISOString(),
        revoked_at: null,
        label,
      });
      this.write(stored);
      return id;
    });
    return { id, key };
  }

  revoke(id: string): boolean {
    return this.locked(() => {
      const stored = this.readStored();
      const k = stored.find((s) => s.id === id);
      if (!k || k.revoked_at) return false;
      k.revoked_at = new Date().toISOString();
      this.write(stored);
      return true;
    });
  }

  /**
   * Runs `change` (read the file, change it, write it) holding the key file's lock. Every process
   * changing the file (servers creating a first key, `tiergraph keys`) does so one at a time and reads
   * what the one before wrote: without it, two creating keys at once kept one's keys only, and a
   * revocation racing a creation was undone while it reported success.
   */
  private locked<T>(change: () => T): T {
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    const lock = this.lockFile;
    const mine = `${process.pid} ${os.hostname()} ${crypto.randomUUID()}\n`;
    // Not Date.now(): a clock set back must not stretch the wait.
    const deadline = performance.now() + this.lockWaitMs;
    for (;;) {
      if (createLock(lock, mine)) {
        this.heldLock = mine;
        try {
          return change();
        } catch (err) {
          if (!(err instanceof LockLostError)) throw err;
          // Broken under this process (judged stale): nothing was written; start again.
        } finally {
          this.heldLock = null;
          releaseLock(lock, mine);
        }
        continue;
      }
      const seen = readLock(lock);
      if (seen === undefined) continue; // released meanwhile
      const holder = holderOf(seen.text);
      if (lockIsStale(holder, seen.mtimeMs, STALE_LOCK_MS)) {
        breakLock(lock, seen.text);
        continue;
      }
      if (performance.now() >= deadline) {
        const by = holder ? `process ${holder.pid} on ${holder.host}` : 'a process';
        throw new Error(
          `${lock} is held by ${by} since ${new Date(seen.mtimeMs).toISOString()}: another change to the ` +
            `API keys has not ended within ${this.lockWaitMs / 1000} s. Try again; if no tiergraph process ` +
            'is changing keys, remove the lock file.',
        );
      }
      sleepSync(5 + Math.random() * 20);
    }
  }

  /**
   * Writes the whole file under a name of this writer's own, on disk before it is renamed over the
   * old one: a reader or a crash sees the old file or the new one, never part of one.
   */
  private write(keys: StoredKey[]): void {
    const tmp = temporaryFor(this.file);
    try {
      const fd = fs.openSync(tmp, 'w', 0o600);
      try {
        fs.writeFileSync(fd, `${JSON.stringify({ keys }, null, 2)}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      // The lock may have been judged stale and taken by another process meanwhile (a holder paused
      // for minutes): then that one's change stands and this one starts again.
      if (this.heldLock === null || readLock(this.lockFile)?.text !== this.heldLock)
        throw new LockLostError();
      fs.renameSync(tmp, this.file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    syncDir(this.dataDir);
    this.load();
  }
}

/**
 * The logger of a store not given one: the `keys` commands' (which read the file once and throw on a
 * bad one, so never log through it) and tests'. A server gives its own, at its LOG_LEVEL.
 */
function defaultLog(): Logger {
  return createLogger('info').child({ module: 'api-keys' });
}

const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/**
 * The keys in the text of `file`. Anything else is refused as a whole, naming the file and what is
 * wrong: a key with a hash that is not one would make every check throw, and a file read as no keys
 * would be written back empty by the next change.
 */
function parseKeyFile(file: string, text: string): StoredKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new KeyFileError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new KeyFileError(`${file} has no "keys" list`);
  keys.forEach((k: Partial<Record<keyof StoredKey, unknown>> | null, i) => {
    const ok =
      typeof k?.id === 'string' &&
      k.id !== '' &&
      typeof k.sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(k.sha256) &&
      (k.revoked_at === null || isTime(k.revoked_at));
    if (!ok)
      throw new KeyFileError(
        `${file}: keys[${i}] is not a stored key (an id, a sha256 of 64 hex digits, revoked_at null or a time)`,
      );
  });
  return keys as StoredKey[];
}

/** The lock of a change was broken by another process before it wrote. */
class LockLostError extends Error {}

/** Makes a rename in `dir` durable (where the platform allows a folder to be synced). */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Not supported here (Windows): the rename stands, it may just not survive a power cut.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Waits synchronously: the store's changes are synchronous (the CLI, a server's first start). */
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** The holder a key file lock names (`<pid> <host> <nonce>`), or null when it names none. */
function holderOf(text: string): LockHolder | null {
  const [pid, host] = text.trim().split(' ');
  const n = Number(pid);
  return Number.isSafeInteger(n) && n > 0 && host ? { pid: n, host } : null;
}

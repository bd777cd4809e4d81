import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../domain/errors';
import type { BlobStore } from '../blob-store';
import { loadOrCreateSecret } from '../../secrets';
import { isSafeKey } from '../blob-store';
import { ExportBudgetExceeded, ExportDiskFull, ExportKeyShareExceeded } from '../export-budget';

/** How much longer than finished files the files still being written are kept by clean-ups. */
export const PARTIAL_GRACE_MS = 24 * 3600 * 1000;

/** Beside a file stored for an API key (`<file>.owner`): the key's id, by which its share is counted. */
const OWNER_SUFFIX = '.owner';
/** A file being written, renamed to its own name once complete. */
const PARTIAL_SUFFIX = '.partial';

/**
 * Why a link is refused: altered, or signed with a secret the server no longer has (DOWNLOAD_SECRET
 * changed). Either way a fresh one comes with the next poll of the run.
 */
const NOT_VALID =
  'This download link is not valid (altered, or signed before the server changed its download secret). Ask for the run again (GET /v1/jobs/{run_id}/) for fresh links.';

/** Where a signed link stands: a path under the app, an expiry (unix seconds) and a signature. */
export const DOWNLOAD_PREFIX = '/downloads/';

/**
 * Export files on local disk (`<dataDir>/exports`), downloaded from the app
 * itself through links signed with HMAC-SHA256 over key and expiry. The secret
 * comes from settings or is generated once and kept under the data directory.
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  readonly root: string;
  private readonly secret: Buffer;
  /** Most bytes all files may take (EXPORT_MAX_BYTES); null: no bound. */
  private maxBytes: number | null = null;
  /**
   * Bytes of stored files and of files being written, as far as this process knows: counted on disk at
   * start, at each clean-up and before a write is refused, and kept up to date by its own writes and
   * removals between (files removed by hand are seen at the next count).
   */
  private usedBytes = 0;
  /** Most bytes the files of one API key may take (EXPORT_MAX_BYTES_PER_KEY); null: no bound. */
  private keyMaxBytes: number | null = null;
  /** The files this process is writing (their `.partial`), for whom, and how many bytes so far. */
  private readonly writing = new Map<string, { owner: string | null; bytes: number }>();
  /**
   * Bytes of the files stored for each API key, and of those a stopped process left half written
   * for it; counted on disk and kept up to date as usedBytes is. Files being written are in `writing`.
   */
  private ownerUsed = new Map<string, number>();

  constructor(
    dataDir: string,
    /** The base of download links: the public URL, else the client's origin, else a default. */
    private readonly publicBase: (origin?: string) => string,
    secret?: string,
    private readonly now: () => number = Date.now,
  ) {
    this.root = path.join(dataDir, 'exports');
    // Exports are the callers' data: for this account only, as the keys and secrets beside them are.
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.secret = Buffer.from(secret ?? loadOrCreateSecret(dataDir, 'download-secret'), 'utf8');
  }

  /**
   * Bounds the bytes all export files take: a write that would pass `maxBytes`
   * fails with ExportBudgetExceeded as the bytes arrive, before the disk fills.
   * `keyMaxBytes` bounds those of the files stored for one API key (put's
   * `owner`) likewise (ExportKeyShareExceeded), so that one key's exports cannot
   * take the whole budget from the others. Files already stored count from the start.
   */
  limitBytes(maxBytes: number | null, keyMaxBytes: number | null = null): this {
    this.maxBytes = maxBytes;
    this.keyMaxBytes = keyMaxBytes;
    this.count();
    return this;
  }

  /** The bytes the files of `owner` take, those this process is writing included, as far as written. */
  private ownerBytes(owner: string): number {
    let used = this.ownerUsed.get(owner) ?? 0;
    for (const w of this.writing.values()) if (w.owner === owner) used += w.bytes;
    return used;
  }

  /**
   * Whose `file` is (the file beside it names the key), and the bytes it counts for them: a stored
   * file, or one left half written by a process that stopped. Null for a file of no key, and for one
   * this process is writing (counted in `writing`).
   */
  private owned(file: string): { owner: string; bytes: number } | null {
    if (file.endsWith(OWNER_SUFFIX) || this.writing.has(file)) return null;
    const base = file.endsWith(PARTIAL_SUFFIX) ? file.slice(0, -PARTIAL_SUFFIX.length) : file;
    const owner = readOwner(`${base}${OWNER_SUFFIX}`);
    if (owner === '') return null;
    return { owner, bytes: fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0 };
  }

  /** Counts the bytes the files take on disk, files being written included, in all and per key. */
  private count(): void {
    let used = 0;
    const owners = new Map<string, number>();
    this.walk(this.root, (file, size) => {
      used += size;
      const owned = this.owned(file);
      if (owned) owners.set(owned.owner, (owners.get(owned.owner) ?? 0) + owned.bytes);
    });
    this.usedBytes = used;
    this.ownerUsed = owners;
  }

  /** A quarter of the space free on the volume of the files: the default budget. */
  defaultBudget(): number {
    const st = fs.statfsSync(this.root);
    return Math.floor((st.bavail * st.bsize) / 4);
  }

  /**
   * Counts the bytes of `partial` as they pass, failing the stream once the budget, or the share of
   * its owner, would be passed.
   */
  private meter(partial: string, owner: string | null): { counter: Transform; written: () => number } {
    const mine = { owner, bytes: 0 };
    this.writing.set(partial, mine);
    // Before a write is refused, the files are counted again, once a write: files removed by hand
    // since the last count are not held against it.
    let recounted = false;
    const wouldPass = (bytes: number) => {
      if (this.maxBytes === null || this.usedBytes + bytes <= this.maxBytes) return false;
      if (recounted) return true;
      recounted = true;
      this.count();
      return this.usedBytes + bytes > this.maxBytes;
    };
    // The owner's files, this one and the others it is writing at once (a three-table run's, its
    // other runs') as far as written now, not when this write started: counted again, once, before
    // it is refused.
    const share = owner === null ? null : this.keyMaxBytes;
    let ownerRecounted = false;
    const wouldPassShare = (bytes: number) => {
      if (share === null || this.ownerBytes(owner!) + bytes <= share) return false;
      if (ownerRecounted) return true;
      ownerRecounted = true;
      this.count();
      return this.ownerBytes(owner!) + bytes > share;
    };
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, callback) => {
        if (wouldPass(chunk.length)) {
          callback(new ExportBudgetExceeded(this.maxBytes!, this.usedBytes));
          return;
        }
        if (wouldPassShare(chunk.length)) {
          callback(new ExportKeyShareExceeded(share!, this.ownerBytes(owner!)));
          return;
        }
        mine.bytes += chunk.length;
        this.usedBytes += chunk.length;
        callback(null, chunk);
      },
    });
    return { counter, written: () => mine.bytes };
  }

  private walk(dir: string, visit: (file: string, size: number, mtimeMs: number) => void): void {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) this.walk(p, visit);
      else {
        const st = fs.statSync(p, { throwIfNoEntry: false });
        if (st) visit(p, st.size, st.mtimeMs);
      }
    }
  }

  /**
   * Removes a file and gives its bytes back to the budget. Not to its key's share: the callers that
   * remove a key's files (delete, deleteOlderThan) count every file again afterwards.
   */
  private remove(file: string): boolean {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (!st) return false;
    fs.rmSync(file, { force: true });
    this.usedBytes = Math.max(0, this.usedBytes - st.size);
    return true;
  }

  private file(key: string): string {
    if (!isSafeKey(key)) throw new Error(`unsafe blob key: ${key}`);
    return path.join(this.root, ...key.split('/'));
  }

  async put(
    key: string,
    body: Readable,
    _contentType: string,
    owner: string | null = null,
  ): Promise<{ key: string; bytes: number }> {
    const target = this.file(key);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    // Written beside, renamed when complete: a reader never sees half a file.
    const partial = `${target}${PARTIAL_SUFFIX}`;
    const { counter, written } = this.meter(partial, owner);
    let out: fs.WriteStream | null = null;
    try {
      // Named before the first byte, so that a count by another write sees whose the file is. In the
      // try: a full disk may refuse this small file as well as the export's.
      if (owner !== null) {
        fs.writeFileSync(`${target}${OWNER_SUFFIX}`, owner, { mode: 0o600 });
        this.usedBytes += Buffer.byteLength(owner);
      }
      out = fs.createWriteStream(partial, { mode: 0o600 });
      await pipeline(body, counter, out);
      fs.renameSync(partial, target);
    } catch (e) {
      // A write refused on its first bytes can fail before its file is even open (the open waits in
      // Node's thread pool): the file is removed once the stream has opened and closed it, or it would
      // appear after the removal and stay.
      const opened = out;
      if (opened && !opened.closed) await new Promise<void>((closed) => opened.once('close', () => closed()));
      fs.rmSync(partial, { force: true });
      this.remove(`${target}${OWNER_SUFFIX}`);
      this.usedBytes = Math.max(0, this.usedBytes - written());
      // A full disk is no fault of the service's, and trying again at once would not help: the run
      // ends FAILED saying so, as one stopped by the budget does.
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new ExportDiskFull(code);
      throw e;
    } finally {
      this.writing.delete(partial);
    }
    const bytes = fs.statSync(target).size;
    if (owner !== null) this.ownerUsed.set(owner, (this.ownerUsed.get(owner) ?? 0) + bytes);
    return { key, bytes };
  }

  signature(key: string, expires: number): string {
    return crypto.createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('hex');
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async so a bad key rejects instead of throwing
  async signedUrl(key: string, ttlSeconds: number, origin?: string): Promise<string> {
    this.file(key);
    const expires = Math.floor(this.now() / 1000) + ttlSeconds;
    const url = `${this.publicBase(origin).replace(/\/$/, '')}${DOWNLOAD_PREFIX}${key}?expires=${expires}&signature=${this.signature(key, expires)}`;
    return url;
  }

  /**
   * Checks a presented link and returns the file to send. A bad signature is
   * 403 (compared in constant time); a good but expired one is 410.
   */
  verify(key: string, expires: unknown, signature: unknown): string {
    if (
      !isSafeKey(key) ||
      typeof expires !== 'string' ||
      typeof signature !== 'string' ||
      !/^\d{1,12}$/.test(expires)
    ) {
      throw new AppError('FORBIDDEN', NOT_VALID);
    }
    const expected = Buffer.from(this.signature(key, Number(expires)), 'hex');
    const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      throw new AppError('FORBIDDEN', NOT_VALID);
    }
    if (Number(expires) * 1000 < this.now()) throw new AppError('GONE', 'This download link has expired.');
    const file = this.file(key);
    if (!fs.existsSync(file)) throw new AppError('GONE', 'This file is no longer kept.');
    return file;
  }

  async exists(key: string): Promise<boolean> {
    const st = await fs.promises.stat(this.file(key)).catch(() => null);
    return st !== null && st.isFile();
  }

  /**
   * Removes the file, and what an attempt that died while writing it left beside it; then its
   * folders (an attempt's, a run's) once nothing is left in them.
   */
  delete(key: string): Promise<void> {
    const file = this.file(key);
    this.remove(file);
    this.remove(`${file}${PARTIAL_SUFFIX}`);
    this.remove(`${file}${OWNER_SUFFIX}`);
    this.removeEmptyFolders(path.dirname(file));
    // Counted again rather than trusted: the files removed may be another process's (an attempt taken
    // over, its .partial grown since the last count, or never counted here), whose bytes subtracted
    // from this process's count would let the budget and the key's share be passed until the next one.
    this.count();
    return Promise.resolve();
  }

  deleteOlderThan(before: Date): Promise<number> {
    let removed = 0;
    this.walk(this.root, (file, _size, mtimeMs) => {
      // The file naming a file's key goes with that file, whatever its own age (it is written first,
      // below). Alone, it goes once it is as old as an expired file: a write names its key before it
      // opens its .partial, and one that has just begun must keep it.
      if (file.endsWith(OWNER_SUFFIX)) {
        if (mtimeMs < before.getTime() && this.removeOwnerOfNothing(file.slice(0, -OWNER_SUFFIX.length)))
          this.removeEmptyFolders(path.dirname(file));
        return;
      }
      // A file still being written may be one a running export has not written to for a while (a
      // three-table run writes its tiers and companies files before its relationships): it goes a
      // day later than finished files, by which time no attempt is still writing it.
      const partial = file.endsWith(PARTIAL_SUFFIX);
      const cutoff = partial ? before.getTime() - PARTIAL_GRACE_MS : before.getTime();
      if (mtimeMs < cutoff && this.remove(file)) {
        removed++;
        this.removeOwnerOfNothing(partial ? file.slice(0, -PARTIAL_SUFFIX.length) : file);
        // Now, not at a later sweep: removing the file made its folders look new.
        this.removeEmptyFolders(path.dirname(file));
      }
    });
    this.removeEmptyFoldersUnder(this.root, before.getTime());
    // The sweep has seen every file: a count now replaces what this process kept track of.
    this.count();
    return Promise.resolve(removed);
  }

  /**
   * Removes the file naming the key of `file` once neither it nor its half-written self is left;
   * whether it did.
   */
  private removeOwnerOfNothing(file: string): boolean {
    return (
      !fs.existsSync(file) &&
      !fs.existsSync(`${file}${PARTIAL_SUFFIX}`) &&
      this.remove(`${file}${OWNER_SUFFIX}`)
    );
  }

  /**
   * Removes `dir` and its parents while they are empty, down to the folders of kinds of files
   * (`runs`), which stay. A folder another attempt writes into is not empty, so stays; one it is
   * about to make is made again (mkdir -p).
   */
  private removeEmptyFolders(dir: string): void {
    for (let d = dir; path.dirname(d).startsWith(this.root + path.sep); d = path.dirname(d)) {
      try {
        fs.rmdirSync(d);
      } catch {
        return;
      }
    }
  }

  /**
   * Removes the empty folders under `dir` that were last changed before `beforeMs`, not the root's
   * own (`runs`).
   */
  private removeEmptyFoldersUnder(dir: string, beforeMs: number): void {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const sub = path.join(dir, entry.name);
      this.removeEmptyFoldersUnder(sub, beforeMs);
      if (dir === this.root) continue;
      const st = fs.statSync(sub, { throwIfNoEntry: false });
      if (!st || st.mtimeMs >= beforeMs) continue;
      try {
        fs.rmdirSync(sub);
      } catch {
        // Not empty, or gone already.
      }
    }
  }
}

/** The key id written beside a file by put; '' when it cannot be read. */
function readOwner(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The signing secret kept under the data directory (created on first use, readable by the owner only). */

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

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

  constructor(
    private readonly dataDir: string,
    private readonly envKeys: readonly string[],
  ) {
    this.reload();
  }

  get file(): string {
    return path.join(this.dataDir, FILE);
  }

  readStored(): StoredKey[] {
    if (!fs.existsSync(this.file)) return [];
    const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { keys?: StoredKey[] };
    return Array.isArray(parsed.keys) ? parsed.keys : [];
  }

  reload(): void {
    this.fileStamp = this.stamp();
    this.accepted = new Map();
    this.entries = [
      // Runs are owned by the key id, so an env key's id comes from the key itself (a
      // prefix of its hash, which reveals nothing usable), not from its place in API_KEYS:
      // reordering the setting must not hand one key's runs to another.
      ...this.envKeys.map((k) => {
        const hash = sha256(k);
        return { id: `env-${hash.toString('hex').slice(0, 16)}`, hash, revoked: false };
      }),
      ...this.readStored().map((k) => ({
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
    const stored = this.readStored();
    const id = `key-${crypto.randomBytes(4).toString('hex')}`;
    stored.push({
      id,
      sha256: sha256(key).toString('hex'),
      created_at: new Date().toISOString(),
      revoked_at: null,
      label,
    });
    this.write(stored);
    return { id, key };
  }

  revoke(id: string): boolean {
    const stored = this.readStored();
    const k = stored.find((s) => s.id === id);
    if (!k || k.revoked_at) return false;
    k.revoked_at = new Date().toISOString();
    this.write(stored);
    return true;
  }

  private write(keys: StoredKey[]): void {
    fs.mkdirSync(this.dataDir, { recursive: true });
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    this.reload();
  }
}

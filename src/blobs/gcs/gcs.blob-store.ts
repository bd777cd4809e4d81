import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Storage } from '@google-cloud/storage';
import type { Bucket, File } from '@google-cloud/storage';
import type { BlobStore } from '../blob-store';
import { isSafeKey } from '../blob-store';

/** The longest lifetime Cloud Storage accepts for a V4 signed URL: seven days, in seconds. */
export const MAX_SIGNED_URL_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Objects listed per request when pruning; the JSON API's own maximum page size. */
const LIST_PAGE_SIZE = 1000;

/** Deletions in flight at once when pruning: enough to overlap round trips without flooding the API. */
const DELETE_CONCURRENCY = 8;

/** How a {@link GcsBlobStore} reaches its bucket. */
export interface GcsBlobStoreOptions {
  /** The bucket that holds export files. */
  bucket: string;
  /** Prepended to every key to form the object name (default `exports/`), so exports share a bucket safely. */
  prefix?: string;
  projectId?: string;
  /** A service-account JSON key file; without it (and without `credentials`) Application Default Credentials apply. */
  keyFilename?: string;
  /** An inline service-account key; with it, URLs are signed locally instead of through the IAM API. */
  credentials?: { client_email: string; private_key: string };
  /** Another endpoint for the JSON API, such as an emulator (`http://localhost:4443`). */
  apiEndpoint?: string;
  /** A ready client, used as is (the other connection options are then ignored). */
  storage?: Storage;
  /** The clock that dates signed URLs (milliseconds since the epoch). */
  now?: () => number;
}

/**
 * Export files in a Google Cloud Storage bucket, under one object-name prefix.
 * Downloads go straight to Cloud Storage through V4 signed URLs, so the app
 * never proxies file contents.
 *
 * When `STORAGE_EMULATOR_HOST` is set (and no `apiEndpoint` is given) the store
 * talks to that emulator, e.g. fake-gcs-server, without authentication.
 */
export class GcsBlobStore implements BlobStore {
  readonly kind = 'gcs' as const;
  /** The client in use; exposed so callers can read objects back or manage the bucket. */
  readonly storage: Storage;
  readonly bucket: Bucket;
  readonly prefix: string;
  private readonly now: () => number;

  constructor(options: GcsBlobStoreOptions) {
    this.prefix = options.prefix ?? 'exports/';
    if (!isSafePrefix(this.prefix))
      throw new Error(`unusable object name prefix: ${JSON.stringify(this.prefix)}`);
    this.now = options.now ?? Date.now;
    this.storage = options.storage ?? createStorage(options);
    this.bucket = this.storage.bucket(options.bucket);
  }

  /** The object name that holds `key`; throws for a key that is not a relative path of safe segments. */
  objectName(key: string): string {
    if (!isSafeKey(key)) throw new Error(`unsafe blob key: ${key}`);
    return `${this.prefix}${key}`;
  }

  private file(key: string): File {
    return this.bucket.file(this.objectName(key));
  }

  async put(key: string, body: Readable, contentType: string): Promise<{ key: string; bytes: number }> {
    const file = this.file(key);
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    const fileName = key.slice(key.lastIndexOf('/') + 1);
    // A single-request upload is all or nothing: a failed stream leaves no object behind and no
    // upload session to resume or clean up. The body still streams through; nothing is buffered whole.
    const sink = file.createWriteStream({
      resumable: false,
      contentType,
      metadata: {
        contentType,
        // A signed link then saves under the export's own name, as local downloads do.
        contentDisposition: `attachment; filename="${fileName}"`,
        // Exports are private: keep shared caches from holding a copy past the link's lifetime.
        cacheControl: 'private, max-age=0, no-store',
      },
    });
    await pipeline(body, counter, sink);
    return { key, bytes };
  }

  async signedUrl(key: string, ttlSeconds: number): Promise<string> {
    const file = this.file(key);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
      throw new RangeError(
        `signed URL lifetime must be a whole number of seconds above 0, got ${ttlSeconds}`,
      );
    }
    if (ttlSeconds > MAX_SIGNED_URL_TTL_SECONDS) {
      throw new RangeError(
        `signed URL lifetime of ${ttlSeconds}s exceeds the Cloud Storage V4 maximum of ${MAX_SIGNED_URL_TTL_SECONDS}s (7 days)`,
      );
    }
    // One clock reading for both ends: the library derives X-Goog-Expires from their difference in
    // whole seconds, so two readings could shave a second off the requested lifetime.
    const now = this.now();
    const [url] = await file.getSignedUrl({
      version: 'v4',
      action: 'read',
      accessibleAt: now,
      expires: now + ttlSeconds * 1000,
    });
    return url;
  }

  async exists(key: string): Promise<boolean> {
    const [kept] = await this.file(key).exists();
    return kept;
  }

  /**
   * Fails, naming GCS_BUCKET, when the bucket is missing or its objects cannot be listed (the clean-up
   * needs that), and naming GCS_KEY_FILE when no link can be signed: at start, rather than at the
   * first export or the first poll of a finished run. Lists at most one object, which
   * `roles/storage.objectAdmin` allows where reading the bucket's own metadata would not.
   */
  async check(): Promise<void> {
    try {
      await this.bucket.getFiles({ prefix: this.prefix, maxResults: 1, autoPaginate: false });
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      const why =
        code === 404
          ? 'does not exist: create it, or set GCS_BUCKET to one that does'
          : `cannot be listed (${(e as Error).message}): the account needs roles/storage.objectAdmin on it`;
      throw new Error(`Cloud Storage bucket "${this.bucket.name}" (GCS_BUCKET) ${why}`, { cause: e });
    }
    // Every poll of a finished run signs its links: credentials that cannot sign would fail each one.
    try {
      await this.signedUrl('signing-check', 60);
    } catch (e) {
      throw new Error(
        `Cloud Storage download links cannot be signed (${(e as Error).message}): set GCS_KEY_FILE to a service account key, or run with credentials that may sign (roles/iam.serviceAccountTokenCreator)`,
        { cause: e },
      );
    }
  }

  async delete(key: string): Promise<void> {
    // Already gone is the wanted outcome, e.g. when a pruning pass got there first.
    await this.file(key).delete({ ignoreNotFound: true });
  }

  async deleteOlderThan(before: Date): Promise<number> {
    const cutoff = before.getTime();
    let removed = 0;
    let pageToken: string | undefined;
    do {
      const [files, next] = await this.bucket.getFiles({
        prefix: this.prefix,
        autoPaginate: false,
        maxResults: LIST_PAGE_SIZE,
        pageToken,
      });
      const stale = files.filter((f) => {
        const created = Date.parse(f.metadata.timeCreated ?? '');
        // An object without a readable creation time is kept: pruning must never guess.
        return Number.isFinite(created) && created < cutoff;
      });
      // Listings run in name order and a page token resumes after the names already returned, so
      // deleting listed objects before asking for the next page skips nothing.
      for (let i = 0; i < stale.length; i += DELETE_CONCURRENCY) {
        await Promise.all(
          stale.slice(i, i + DELETE_CONCURRENCY).map((f) => f.delete({ ignoreNotFound: true })),
        );
      }
      removed += stale.length;
      // The library types the next query as always present; at runtime it is null after the last page.
      pageToken = (next as { pageToken?: string } | null)?.pageToken;
    } while (pageToken);
    return removed;
  }
}

/**
 * The API endpoint named by a `STORAGE_EMULATOR_HOST` value: a scheme is added when missing
 * (`http`, as emulators usually serve plain HTTP) and a trailing `/storage/v1` is dropped,
 * since the client appends API paths to the endpoint itself.
 */
export function emulatorEndpoint(host: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(host.trim()) ? host.trim() : `http://${host.trim()}`;
  return withScheme.replace(/\/+$/, '').replace(/\/storage\/v1$/, '');
}

function createStorage(options: GcsBlobStoreOptions): Storage {
  const emulator = process.env.STORAGE_EMULATOR_HOST?.trim() || undefined;
  const apiEndpoint =
    options.apiEndpoint ?? (emulator === undefined ? undefined : emulatorEndpoint(emulator));
  const storage = new Storage({
    projectId: options.projectId,
    keyFilename: options.keyFilename,
    credentials: options.credentials,
    apiEndpoint,
  });
  // With STORAGE_EMULATOR_HOST set, the client (v7) sends JSON API calls to the raw variable
  // (`<host>/b/...`) while uploads go to `<endpoint>/upload/storage/v1/...`; emulators such as
  // fake-gcs-server serve the JSON API under `/storage/v1` only. Pointing the JSON API at
  // `<endpoint>/storage/v1`, as the client does for a plain endpoint, makes both paths agree.
  if (emulator !== undefined) storage.baseUrl = `${storage.apiEndpoint}/storage/v1`;
  return storage;
}

/** A prefix may be empty; otherwise it is plain text that cannot escape or confuse the object namespace. */
function isSafePrefix(prefix: string): boolean {
  return (
    prefix.length <= 512 &&
    !prefix.startsWith('/') &&
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    !/[\u0000-\u001f\u007f]/.test(prefix) &&
    prefix.split('/').every((segment) => segment !== '.' && segment !== '..')
  );
}

import type { Readable } from 'node:stream';

/** Where export files go: local disk by default, Google Cloud Storage in production. */
export interface BlobStore {
  readonly kind: 'local' | 'gcs';
  /**
   * Stores the stream under `key` (a relative path of safe segments); resolves once it is complete.
   * `owner`: the id of the API key the file is written for, whose share of a bounded store it counts in.
   */
  put(
    key: string,
    body: Readable,
    contentType: string,
    owner?: string | null,
  ): Promise<{ key: string; bytes: number }>;
  /**
   * A link that downloads `key` without an API key until `ttlSeconds` from now.
   * `origin`: the address the asking client reached this server by (`https://host:port`), for a
   * link the server itself serves when no public URL is configured; a store whose links point
   * elsewhere (Cloud Storage) ignores it.
   */
  signedUrl(key: string, ttlSeconds: number, origin?: string): Promise<string>;
  /**
   * Whether `key` is stored: false once a clean-up, a bucket's own lifecycle rule or a hand removed it.
   * Nothing is read but the file's entry.
   */
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Removes files stored before `before`; returns how many. */
  deleteOlderThan(before: Date): Promise<number>;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Keys are relative paths of safe segments, so no key can name a file outside the store. */
export function isSafeKey(key: string): boolean {
  const parts = key.split('/');
  return (
    parts.length > 0 && parts.length <= 8 && parts.every((p) => SEGMENT.test(p) && p !== '.' && p !== '..')
  );
}

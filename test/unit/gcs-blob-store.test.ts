import childProcess from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { Storage } from '@google-cloud/storage';
import {
  GcsBlobStore,
  MAX_SIGNED_URL_TTL_SECONDS,
  emulatorEndpoint,
} from '../../src/blobs/gcs/gcs.blob-store';

const CLIENT_EMAIL = 'exporter@example-project.iam.gserviceaccount.com';
const BUCKET = 'tiergraph-exports-test';
const HOST = 'storage.googleapis.com';

const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

// Next year, with a millisecond part: far enough ahead that the library never sees the expiry
// as past, and fixed so the dates in the URL are known in advance.
const YEAR = new Date().getUTCFullYear() + 1;
const FIXED_NOW = Date.UTC(YEAR, 2, 4, 5, 6, 7, 890);
const FIXED_DAY = `${YEAR}0304`;
const FIXED_STAMP = `${FIXED_DAY}T050607Z`;

function store(options: { prefix?: string; now?: () => number } = {}): GcsBlobStore {
  return new GcsBlobStore({
    bucket: BUCKET,
    projectId: 'example-project',
    credentials: { client_email: CLIENT_EMAIL, private_key: privateKey },
    now: () => FIXED_NOW,
    ...options,
  });
}

/** RFC 3986 percent-encoding of every UTF-8 byte outside the unreserved set, optionally keeping '/'. */
function percentEncode(text: string, keepSlash: boolean): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(ch) || (keepSlash && ch === '/')) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Checks a V4 signed GET URL the way Cloud Storage would, built only from the published
 * signing steps: canonical request, string to sign, RSA-SHA256 over it with the signer's key.
 * `objectName` is what the caller expects the URL to grant; the canonical request is built from it.
 */
function verifyV4(signedUrl: string, objectName: string, key: crypto.KeyLike = publicKey): boolean {
  const url = new URL(signedUrl);
  const params = [...url.searchParams.entries()];
  const signature = url.searchParams.get('X-Goog-Signature') ?? '';
  const date = url.searchParams.get('X-Goog-Date') ?? '';
  const credential = url.searchParams.get('X-Goog-Credential') ?? '';
  const scope = credential.slice(credential.indexOf('/') + 1);
  const canonicalUri = `/${BUCKET}/${percentEncode(objectName, true)}`;
  const canonicalQuery = params
    .filter(([name]) => name !== 'X-Goog-Signature')
    .map(([name, value]) => [percentEncode(name, false), percentEncode(value, false)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    canonicalUri,
    canonicalQuery,
    `host:${HOST}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'GOOG4-RSA-SHA256',
    date,
    scope,
    crypto.createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  return (
    url.host === HOST &&
    url.pathname === canonicalUri &&
    /^[0-9a-f]+$/.test(signature) &&
    crypto.verify('RSA-SHA256', Buffer.from(stringToSign), key, Buffer.from(signature, 'hex'))
  );
}

// The unit tests sign for the real service; an emulator variable in the environment would
// redirect the URLs' host (that path is covered by the emulator suite).
const savedEmulatorHost = process.env.STORAGE_EMULATOR_HOST;
beforeAll(() => {
  delete process.env.STORAGE_EMULATOR_HOST;
});
afterAll(() => {
  if (savedEmulatorHost !== undefined) process.env.STORAGE_EMULATOR_HOST = savedEmulatorHost;
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('GcsBlobStore V4 signed URLs', () => {
  it('carry the documented query parameters for a GET valid for the ttl', async () => {
    const url = new URL(await store().signedUrl('runs/7/tierview.csv', 3600));
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe(HOST);
    expect(url.pathname).toBe(`/${BUCKET}/exports/runs/7/tierview.csv`);
    const q = url.searchParams;
    expect(q.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(q.get('X-Goog-Credential')).toBe(`${CLIENT_EMAIL}/${FIXED_DAY}/auto/storage/goog4_request`);
    expect(q.get('X-Goog-Date')).toBe(FIXED_STAMP);
    expect(q.get('X-Goog-Expires')).toBe('3600');
    expect(q.get('X-Goog-SignedHeaders')).toBe('host');
    // 2048-bit RSA: 256 signature bytes, 512 hex digits.
    expect(q.get('X-Goog-Signature')).toMatch(/^[0-9a-f]{512}$/);
  });

  it('verify against the signer public key when rebuilt from the published V4 steps', async () => {
    const url = await store().signedUrl('runs/7/tierview.csv', 900);
    expect(verifyV4(url, 'exports/runs/7/tierview.csv')).toBe(true);
  });

  it('percent-encode the object name in the path and still verify', async () => {
    const s = store({ prefix: 'tier graph/exports+v1!/' });
    const url = await s.signedUrl('runs/8/tier-view.csv', 60);
    expect(new URL(url).pathname).toBe(`/${BUCKET}/tier%20graph/exports%2Bv1%21/runs/8/tier-view.csv`);
    expect(verifyV4(url, 'tier graph/exports+v1!/runs/8/tier-view.csv')).toBe(true);
  });

  it('do not verify once the object name or the expiry is changed', async () => {
    const url = await store().signedUrl('runs/7/tierview.csv', 3600);
    expect(verifyV4(url, 'exports/runs/7/tierview.csv')).toBe(true);

    const other = new URL(url);
    other.pathname = `/${BUCKET}/exports/runs/8/tierview.csv`;
    expect(verifyV4(other.toString(), 'exports/runs/8/tierview.csv')).toBe(false);

    const longer = new URL(url);
    longer.searchParams.set('X-Goog-Expires', '604800');
    expect(verifyV4(longer.toString(), 'exports/runs/7/tierview.csv')).toBe(false);

    const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(verifyV4(url, 'exports/runs/7/tierview.csv', otherKey)).toBe(false);
  });

  it('are dated by the real clock when none is given', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const url = new URL(await store({ now: undefined }).signedUrl('a.csv', 120));
    const after = Date.now();
    const stamp = Date.parse(
      (url.searchParams.get('X-Goog-Date') ?? '').replace(
        /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
        '$1-$2-$3T$4:$5:$6Z',
      ),
    );
    expect(stamp).toBeGreaterThanOrEqual(before);
    expect(stamp).toBeLessThanOrEqual(after);
    expect(url.searchParams.get('X-Goog-Expires')).toBe('120');
  });

  it('accept the seven-day maximum and reject anything longer, zero or fractional', async () => {
    const s = store();
    const url = new URL(await s.signedUrl('a.csv', MAX_SIGNED_URL_TTL_SECONDS));
    expect(url.searchParams.get('X-Goog-Expires')).toBe('604800');
    await expect(s.signedUrl('a.csv', 604801)).rejects.toThrow(/604800s \(7 days\)/);
    await expect(s.signedUrl('a.csv', 0)).rejects.toThrow(RangeError);
    await expect(s.signedUrl('a.csv', 1.5)).rejects.toThrow(RangeError);
  });

  it('are signed locally: no HTTP request and no gcloud process', async () => {
    const httpRequest = jest.spyOn(http, 'request');
    const httpsRequest = jest.spyOn(https, 'request');
    const exec = jest.spyOn(childProcess, 'exec');
    const url = await store().signedUrl('runs/9/x.csv', 60);
    expect(verifyV4(url, 'exports/runs/9/x.csv')).toBe(true);
    expect(httpRequest).not.toHaveBeenCalled();
    expect(httpsRequest).not.toHaveBeenCalled();
    expect(exec).not.toHaveBeenCalled();
  });
});

describe('GcsBlobStore keys and object names', () => {
  it.each(['../etc/passwd', '/abs.csv', 'runs//x.csv', 'runs/./x.csv', 'a b.csv', '', 'x'.repeat(129)])(
    'rejects the unsafe key %j for put and signedUrl',
    async (key) => {
      const s = store();
      const body = Readable.from(['never read']);
      await expect(s.put(key, body, 'text/csv')).rejects.toThrow(/unsafe blob key/);
      await expect(s.signedUrl(key, 60)).rejects.toThrow(/unsafe blob key/);
      await expect(s.delete(key)).rejects.toThrow(/unsafe blob key/);
      // The body was never consumed: nothing was sent anywhere.
      expect(body.readableDidRead).toBe(false);
    },
  );

  it('prefixes object names with exports/ by default, or the given prefix', () => {
    expect(store().objectName('runs/7/tierview.csv')).toBe('exports/runs/7/tierview.csv');
    expect(store({ prefix: 'tenant-a/' }).objectName('r.csv')).toBe('tenant-a/r.csv');
    expect(store({ prefix: '' }).objectName('r.csv')).toBe('r.csv');
    expect(store().bucket.name).toBe(BUCKET);
  });

  it('refuses prefixes that could escape or confuse the namespace', () => {
    for (const prefix of ['/exports/', '../exports/', 'a/../b/', 'exports\n/']) {
      expect(() => store({ prefix })).toThrow(/unusable object name prefix/);
    }
  });

  it('uses an injected client as is', () => {
    const storage = new Storage({ projectId: 'injected' });
    const s = new GcsBlobStore({ bucket: BUCKET, storage });
    expect(s.storage).toBe(storage);
    expect(s.bucket.storage).toBe(storage);
  });
});

describe('GcsBlobStore pruning', () => {
  interface FakeFile {
    name: string;
    metadata: { timeCreated?: string };
    delete: jest.Mock;
  }
  const fakeFile = (name: string, timeCreated?: string): FakeFile => ({
    name,
    metadata: timeCreated === undefined ? {} : { timeCreated },
    delete: jest.fn(() => Promise.resolve([{}])),
  });

  it('pages through the listing under the prefix and deletes only objects created before the cutoff', async () => {
    const page1 = [
      fakeFile('exports/old-1.csv', '2024-01-01T00:00:00.000Z'),
      fakeFile('exports/new-1.csv', '2024-03-01T00:00:00.000Z'),
      fakeFile('exports/undated.csv'),
      fakeFile('exports/at-cutoff.csv', '2024-02-01T00:00:00.000Z'),
    ];
    const page2 = [fakeFile('exports/old-2.csv', '2023-12-31T23:59:59.999Z')];
    const getFiles = jest
      .fn<Promise<[FakeFile[], Record<string, unknown> | null, unknown]>, [Record<string, unknown>]>()
      .mockResolvedValueOnce([page1, { prefix: 'exports/', pageToken: 'page-2' }, {}])
      .mockResolvedValueOnce([page2, null, {}]);
    const fakeBucket = { name: BUCKET, getFiles };
    // Only the two members the store touches are faked; the cast stands in for the full client type.
    const storage = { bucket: () => fakeBucket } as unknown as Storage;
    const s = new GcsBlobStore({ bucket: BUCKET, storage });

    expect(await s.deleteOlderThan(new Date('2024-02-01T00:00:00.000Z'))).toBe(2);

    expect(getFiles).toHaveBeenCalledTimes(2);
    expect(getFiles.mock.calls[0]![0]).toMatchObject({
      prefix: 'exports/',
      autoPaginate: false,
      pageToken: undefined,
    });
    expect(getFiles.mock.calls[1]![0]).toMatchObject({
      prefix: 'exports/',
      autoPaginate: false,
      pageToken: 'page-2',
    });
    const deleted = [...page1, ...page2].filter((f) => f.delete.mock.calls.length > 0).map((f) => f.name);
    expect(deleted).toEqual(['exports/old-1.csv', 'exports/old-2.csv']);
    expect(page1[0]!.delete).toHaveBeenCalledWith({ ignoreNotFound: true });
  });
});

describe('emulator endpoint', () => {
  it.each([
    ['localhost:4443', 'http://localhost:4443'],
    ['http://localhost:4443/', 'http://localhost:4443'],
    ['http://localhost:4443/storage/v1', 'http://localhost:4443'],
    ['https://gcs.test:4443/storage/v1/', 'https://gcs.test:4443'],
    ['http://proxy.test/gcs', 'http://proxy.test/gcs'],
  ])('reads STORAGE_EMULATOR_HOST=%j as %j', (value, endpoint) => {
    expect(emulatorEndpoint(value)).toBe(endpoint);
  });

  it('sends JSON API calls and uploads to the same emulator when the variable is set', () => {
    process.env.STORAGE_EMULATOR_HOST = 'localhost:4443';
    try {
      const s = new GcsBlobStore({ bucket: BUCKET });
      expect(s.storage.apiEndpoint).toBe('http://localhost:4443');
      expect(s.storage.baseUrl).toBe('http://localhost:4443/storage/v1');
    } finally {
      delete process.env.STORAGE_EMULATOR_HOST;
    }
  });

  it('talks to the public endpoint when neither the variable nor apiEndpoint is set', () => {
    const s = store();
    expect(s.storage.apiEndpoint).toBe(`https://${HOST}`);
    expect(s.storage.baseUrl).toBe(`https://${HOST}/storage/v1`);
  });
});

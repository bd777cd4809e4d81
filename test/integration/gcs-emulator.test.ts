import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GcsBlobStore, emulatorEndpoint } from '../../src/blobs/gcs/gcs.blob-store';
import { fileStoreUnreachable } from '../../src/jobs/tierview.job';
import { Relay } from '../support/relay';

/**
 * Runs the GCS blob store against a Cloud Storage emulator (fake-gcs-server, which
 * `.ci/services.sh` starts). Chosen at load time: without STORAGE_EMULATOR_HOST the
 * suite is skipped with a note saying how to run it, except under CI=true, where
 * the emulator is part of the test services and its absence is a failure.
 */
const EMULATOR = process.env.STORAGE_EMULATOR_HOST?.trim() ?? '';
const BUCKET = process.env.GCS_BUCKET ?? process.env.GCS_EMULATOR_BUCKET ?? 'tiergraph-it';
const GCS_HINT =
  'STORAGE_EMULATOR_HOST is not set: run `source .ci/services.sh` (starts fake-gcs-server on 127.0.0.1:4443)';
if (EMULATOR === '' && (process.env.CI === 'true' || process.env.CI === '1'))
  throw new Error(`the Cloud Storage emulator is required under CI=true: ${GCS_HINT}`);
const suite = EMULATOR === '' ? describe.skip : describe;

if (EMULATOR === '') {
  // Written to stderr directly: jest drops console output of a file whose tests are all skipped.
  process.stderr.write(
    [
      `gcs-emulator.test.ts skipped: ${GCS_HINT},`,
      '  then: npx jest test/integration/gcs-emulator.test.ts',
      `(bucket "${BUCKET}" is created when missing; GCS_BUCKET names another)`,
    ].join('\n') + '\n',
  );
}

const SIZE = 5 * 1024 * 1024 + 12_345;
const CHUNK = 64 * 1024;

/** SIZE random bytes in 64 KiB chunks, hashed as they are produced and never held in memory at once. */
function generated(): { body: Readable; digest: () => string } {
  const hash = crypto.createHash('sha256');
  function* chunks(): Generator<Buffer> {
    for (let sent = 0; sent < SIZE; sent += CHUNK) {
      const out = crypto.randomBytes(Math.min(CHUNK, SIZE - sent));
      hash.update(out);
      yield out;
    }
  }
  return { body: Readable.from(chunks()), digest: () => hash.digest('hex') };
}

suite('GcsBlobStore on a Cloud Storage emulator', () => {
  // A prefix of its own per run, so pruning here can only touch this run's objects.
  const prefix = `it-${Date.now()}-${crypto.randomBytes(4).toString('hex')}/`;
  let store: GcsBlobStore;

  beforeAll(async () => {
    // A project id spares the client its project discovery (gcloud, metadata server) on bucket creation.
    store = new GcsBlobStore({ bucket: BUCKET, prefix, projectId: 'tiergraph-test' });
    const [exists] = await store.bucket.exists();
    if (!exists) await store.storage.createBucket(BUCKET);
  });

  afterAll(async () => {
    await store?.deleteOlderThan(new Date(Date.now() + 24 * 3600 * 1000));
  });

  it('streams a file of several MB in, counts its bytes and reads back the same content', async () => {
    const { body, digest } = generated();
    const result = await store.put('runs/1/tierview.csv', body, 'text/csv');
    expect(result).toEqual({ key: 'runs/1/tierview.csv', bytes: SIZE });
    const expected = digest();

    const file = store.bucket.file(`${prefix}runs/1/tierview.csv`);
    const readBack = crypto.createHash('sha256');
    let length = 0;
    await pipeline(file.createReadStream(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        length += chunk.length;
        readBack.update(chunk);
      }
    });
    expect(length).toBe(SIZE);
    expect(readBack.digest('hex')).toBe(expected);

    const [metadata] = await file.getMetadata();
    expect(metadata.contentType).toBe('text/csv');
    expect(Number(metadata.size)).toBe(SIZE);
  });

  /** A store of this run's prefix with a throwaway service-account key, which signs links. */
  function withKey(): GcsBlobStore {
    const { privateKey } = crypto.generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    return new GcsBlobStore({
      bucket: BUCKET,
      prefix,
      projectId: 'tiergraph-test',
      credentials: {
        client_email: 'exporter@example-project.iam.gserviceaccount.com',
        private_key: privateKey,
      },
    });
  }

  it('signs links for the emulator host when given a key', async () => {
    const signer = withKey();
    const url = new URL(await signer.signedUrl('runs/1/tierview.csv', 600));
    expect(url.origin).toBe(new URL(emulatorEndpoint(EMULATOR)).origin);
    expect(url.pathname).toBe(`/${BUCKET}/${prefix}runs/1/tierview.csv`);
    expect(url.searchParams.get('X-Goog-Expires')).toBe('600');
  });

  it('ignores deleting a missing object and prunes only what was created before the cutoff', async () => {
    await expect(store.delete('runs/404/missing.csv')).resolves.toBeUndefined();
    await store.put('runs/2/small.csv', Readable.from(['a,b\n', '1,2\n']), 'text/csv');

    expect(await store.deleteOlderThan(new Date(Date.now() - 3600 * 1000))).toBe(0);
    expect(await store.exists('runs/2/small.csv')).toBe(true);
    expect(await store.exists('runs/404/missing.csv')).toBe(false);
    const [before] = await store.bucket.getFiles({ prefix });
    expect(before.map((f) => f.name).sort()).toEqual([
      `${prefix}runs/1/tierview.csv`,
      `${prefix}runs/2/small.csv`,
    ]);

    expect(await store.deleteOlderThan(new Date(Date.now() + 60 * 1000))).toBe(2);
    const [after] = await store.bucket.getFiles({ prefix });
    expect(after).toHaveLength(0);
    expect(await store.exists('runs/2/small.csv')).toBe(false);
  });

  it('tells at start whether the bucket is there and links can be signed, naming the setting when not', async () => {
    await expect(withKey().check()).resolves.toBeUndefined();
    // The emulator takes requests without credentials; signing a link needs them all the same.
    await expect(store.check()).rejects.toThrow(
      /^Cloud Storage download links cannot be signed \(.*\): set GCS_KEY_FILE/,
    );
    const missing = new GcsBlobStore({
      bucket: `missing-${prefix.slice(0, -1)}`,
      projectId: 'tiergraph-test',
    });
    await expect(missing.check()).rejects.toThrow(
      /^Cloud Storage bucket "missing-it-[^"]+" \(GCS_BUCKET\) does not exist: create it, or set GCS_BUCKET to one that does$/,
    );
  });

  it('an upload while the store cannot be reached fails with an error an export waits out; once back, it lands', async () => {
    const endpoint = new URL(emulatorEndpoint(EMULATOR));
    const relay = new Relay(endpoint.hostname, Number(endpoint.port));
    await relay.open();
    const through = new GcsBlobStore({
      bucket: BUCKET,
      prefix,
      projectId: 'tiergraph-test',
      apiEndpoint: `http://127.0.0.1:${relay.port}`,
    });
    try {
      await relay.cut();
      const failure: unknown = await through.put('runs/4/away.csv', Readable.from(['x\n']), 'text/csv').then(
        () => null,
        (e: unknown) => e,
      );
      expect(failure).not.toBeNull();
      expect(fileStoreUnreachable(failure)).toBe(true);
      // A refusal that is the store's answer, not its absence, is not waited out.
      const refused: unknown = await new GcsBlobStore({
        bucket: `missing-${prefix.slice(0, -1)}`,
        projectId: 'tiergraph-test',
      })
        .put('runs/4/nowhere.csv', Readable.from(['x\n']), 'text/csv')
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(refused).not.toBeNull();
      expect(fileStoreUnreachable(refused)).toBe(false);
      await relay.open();
      await expect(through.put('runs/4/away.csv', Readable.from(['x\n']), 'text/csv')).resolves.toEqual({
        key: 'runs/4/away.csv',
        bytes: 2,
      });
      expect(await store.exists('runs/4/away.csv')).toBe(true);
    } finally {
      await relay.cut();
    }
  });

  it('deletes one object by key', async () => {
    await store.put('runs/3/one.csv', Readable.from(['x\n']), 'text/csv');
    await store.delete('runs/3/one.csv');
    const [exists] = await store.bucket.file(`${prefix}runs/3/one.csv`).exists();
    expect(exists).toBe(false);
  });
});

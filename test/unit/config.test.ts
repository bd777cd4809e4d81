import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, SETTING_NAMES, loadConfig } from '../../src/config/env';
import { ROOT } from '../support/paths';

describe('loadConfig', () => {
  it('works with no settings at all', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 4000,
      STORE: 'embedded',
      API_KEY_HEADER: 'X-SERVICE-KEY',
      API_KEYS: [],
      SEED_DEMO: true,
      // Edges are read from the point-read file unless turned off (the engine's point query costs far more).
      EMBEDDED_POINT_READS: true,
      EMBEDDED_POINT_READS_EDGES: true,
      // Read through into the page cache once held, so that the first reads after a start do not wait on the disk.
      POINT_READS_WARM: true,
      // Reads seldom reach the engine once its derived data is held; a larger pool raised the peak.
      EMBEDDED_BUFFER_POOL_MB: 512,
    });
    expect(c.dataDir).toBe(path.resolve('./data'));
  });

  it('treats empty strings as unset and parses lists and booleans', () => {
    const c = loadConfig({ PORT: '', API_KEYS: ' aaaaaaaaaaaaaaaa , bbbbbbbbbbbbbbbb ,', SEED_DEMO: 'no' });
    expect(c.PORT).toBe(4000);
    expect(c.API_KEYS).toEqual(['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
    expect(c.SEED_DEMO).toBe(false);
  });

  it('takes switches in any case, as import files do, and names what they take when refused', () => {
    const c = loadConfig({ SEED_DEMO: 'FALSE', CALLBACK_ALLOW_HTTP: 'Yes', EMBEDDED_POINT_READS: ' No ' });
    expect([c.SEED_DEMO, c.CALLBACK_ALLOW_HTTP, c.EMBEDDED_POINT_READS]).toEqual([false, true, false]);
    expect(() => loadConfig({ SEED_DEMO: 'maybe' })).toThrow(/SEED_DEMO: .*true.*false/);
  });

  it('reports every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        STORE: 'mysql',
        API_KEYS: 'short',
        LOG_LEVEL: 'loud',
        API_KEY_HEADER: 'bad header',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const fields = (error as ConfigError).issues.map((i) => i.split(':')[0]);
    expect(fields.sort()).toEqual(['API_KEYS', 'API_KEY_HEADER', 'LOG_LEVEL', 'PORT', 'STORE']);
  });

  it('reports the settings others require in the same start as those bad on their own', () => {
    let error: unknown;
    try {
      loadConfig({ DOWNLOAD_TTL_S: '700000', JOBS_BACKEND: 'mongodb', BLOB_STORE: 'gcs' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const fields = (error as ConfigError).issues.map((i) => i.split(':')[0]);
    expect(fields.sort()).toEqual(['DOWNLOAD_TTL_S', 'GCS_BUCKET', 'MONGODB_URI']);
  });

  it('refuses a MongoDB URI that names no database, which the driver would take for "test"', () => {
    const mongo = (uri: string) => () => loadConfig({ JOBS_BACKEND: 'mongodb', MONGODB_URI: uri });
    for (const uri of [
      'mongodb://127.0.0.1:27017',
      'mongodb://127.0.0.1:27017/',
      'mongodb://h1,h2/?replicaSet=rs0',
    ])
      expect(mongo(uri)).toThrow(/MONGODB_URI: must name the database/);
    for (const uri of [
      'mongodb://127.0.0.1:27017/tiergraph',
      'mongodb://u:p@h1,h2,h3/tiergraph?replicaSet=rs0',
      'mongodb+srv://cluster.example.net/tiergraph',
    ])
      expect(mongo(uri)().MONGODB_URI).toBe(uri);
  });

  it('takes an object-name prefix of safe segments for the bucket, exports/ by default', () => {
    const gcs = { BLOB_STORE: 'gcs', GCS_BUCKET: 'exports' };
    expect(loadConfig(gcs).GCS_PREFIX).toBe('exports/');
    expect(loadConfig({ ...gcs, GCS_PREFIX: 'staging/exports/' }).GCS_PREFIX).toBe('staging/exports/');
    for (const bad of ['exports', '/exports/', '../x/', 'a b/'])
      expect(() => loadConfig({ ...gcs, GCS_PREFIX: bad })).toThrow(/GCS_PREFIX/);
  });

  it('refuses a Cloud Storage key file that cannot sign links', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gcs-key-'));
    try {
      const gcs = { BLOB_STORE: 'gcs', GCS_BUCKET: 'exports' };
      const missing = path.join(dir, 'missing.json');
      expect(() => loadConfig({ ...gcs, GCS_KEY_FILE: missing })).toThrow(
        `GCS_KEY_FILE: cannot be read (ENOENT): ${missing}`,
      );
      const notKey = path.join(dir, 'not-a-key.json');
      fs.writeFileSync(notKey, '{"type":"authorized_user"}');
      expect(() => loadConfig({ ...gcs, GCS_KEY_FILE: notKey })).toThrow(
        /GCS_KEY_FILE: is not a service-account key/,
      );
      const key = path.join(dir, 'key.json');
      fs.writeFileSync(
        key,
        JSON.stringify({ client_email: 'x@y.iam.gserviceaccount.com', private_key: 'k' }),
      );
      expect(loadConfig({ ...gcs, GCS_KEY_FILE: key }).GCS_KEY_FILE).toBe(key);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the callback retry schedule, refusing no attempts at all', () => {
    expect(loadConfig({})).toMatchObject({
      CALLBACK_MAX_ATTEMPTS: 10,
      CALLBACK_RETRY_BASE_S: 10,
      CALLBACK_RETRY_MAX_S: 3600,
    });
    expect(loadConfig({ CALLBACK_MAX_ATTEMPTS: '3', CALLBACK_RETRY_MAX_S: '60' })).toMatchObject({
      CALLBACK_MAX_ATTEMPTS: 3,
      CALLBACK_RETRY_MAX_S: 60,
    });
    expect(() => loadConfig({ CALLBACK_MAX_ATTEMPTS: '0' })).toThrow(/CALLBACK_MAX_ATTEMPTS/);
  });

  it('refuses a malformed callback host list at start-up', () => {
    expect(() => loadConfig({ CALLBACK_HOSTS: 'https://hooks.example.com' })).toThrow(/CALLBACK_HOSTS/);
  });

  it('bounds queued runs per key and the export disk budget', () => {
    const c = loadConfig({});
    expect(c.JOBS_MAX_QUEUED_PER_KEY).toBe(20);
    expect(c.EXPORT_MAX_BYTES).toBeUndefined();
    expect(c.EXPORT_MAX_BYTES_PER_KEY).toBeUndefined();
    expect(loadConfig({ EXPORT_MAX_BYTES_PER_KEY: '2000000' }).EXPORT_MAX_BYTES_PER_KEY).toBe(2_000_000);
    expect(() => loadConfig({ EXPORT_MAX_BYTES_PER_KEY: '10' })).toThrow(/EXPORT_MAX_BYTES_PER_KEY/);
    expect(loadConfig({ EXPORT_MAX_BYTES: '5000000000', JOBS_MAX_QUEUED_PER_KEY: '3' })).toMatchObject({
      EXPORT_MAX_BYTES: 5_000_000_000,
      JOBS_MAX_QUEUED_PER_KEY: 3,
    });
    for (const bad of [
      { EXPORT_MAX_BYTES: '10' },
      { EXPORT_MAX_BYTES: 'lots' },
      { JOBS_MAX_QUEUED_PER_KEY: '0' },
    ]) {
      expect(() => loadConfig(bad)).toThrow(ConfigError);
    }
  });

  it('reads every setting the README lists, and the README lists every one it reads', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(
      readme.indexOf('## Settings'),
      readme.indexOf('\n## ', readme.indexOf('## Settings') + 1),
    );
    const listed = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)].map((m) => m[1]);
    // The Cloud Storage client reads STORAGE_EMULATOR_HOST itself (see gcs.blob-store.ts).
    expect([...listed].sort()).toEqual([...SETTING_NAMES, 'STORAGE_EMULATOR_HOST'].sort());
  });
});

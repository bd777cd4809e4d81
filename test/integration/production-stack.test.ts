import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { NEO4J_HINT, emptyNeo4j, neo4jAvailability, startNeo4j } from '../support/neo4j';
import type { Neo4jTarget } from '../support/neo4j';
import { tempDir } from '../support/paths';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';
import { MONGO_HINT, inCi, skipVisibly, testMongoUrl } from '../support/services';

/**
 * The service as production runs it: Neo4j as the graph store, Agenda and the run
 * records on the MongoDB wire protocol, exports in Cloud Storage (the emulator).
 * It starts on an empty Neo4j, loads the demo dataset itself, and one client goes
 * through the REST flow down to the bytes of an export.
 */
const EMULATOR = process.env.STORAGE_EMULATOR_HOST?.trim() ?? '';
const GCS_HINT = 'STORAGE_EMULATOR_HOST is not set: run `source .ci/services.sh`';
const mongoUrl = testMongoUrl();
const missing = [
  neo4jAvailability() === 'uri' ? null : NEO4J_HINT,
  mongoUrl === null ? MONGO_HINT : null,
  EMULATOR === '' ? GCS_HINT : null,
].filter((m): m is string => m !== null);
if (missing.length > 0 && inCi())
  throw new Error(`the production stack is required under CI=true: ${missing.join('; ')}`);

type Json = Record<string, unknown>;

if (missing.length > 0) {
  skipVisibly(describe.skip, 'production stack', missing.join('; '), () => {
    it('serves the REST flow', () => undefined);
  });
} else {
  describe('production stack: Neo4j, MongoDB-wire jobs, Cloud Storage exports', () => {
    jest.setTimeout(240_000);
    const dbName = `tiergraph_test_stack_${crypto.randomBytes(6).toString('hex')}`;
    const bucket = process.env.GCS_BUCKET ?? 'tiergraph-test';
    let target: Neo4jTarget;
    let t: TestServer;
    let keyDir: string;

    beforeAll(async () => {
      target = await startNeo4j();
      await emptyNeo4j(target);
      // The emulator does not check signatures; links are signed as in production, with a key of our own.
      keyDir = tempDir('stack-key');
      const keyFile = path.join(keyDir, 'key.json');
      const { privateKey } = crypto.generateKeyPairSync('rsa', {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      fs.writeFileSync(
        keyFile,
        JSON.stringify({
          type: 'service_account',
          project_id: 'tiergraph-test',
          private_key: privateKey,
          client_email: 'exports@tiergraph-test.iam.gserviceaccount.com',
        }),
      );
      const url = new URL(mongoUrl!);
      url.pathname = `/${dbName}`;
      t = await startTestServer(
        {
          STORE: 'neo4j',
          NEO4J_URI: target.uri,
          NEO4J_USER: target.user,
          NEO4J_PASSWORD: target.password,
          NEO4J_DATABASE: target.database,
          JOBS_BACKEND: 'mongodb',
          MONGODB_URI: url.toString(),
          BLOB_STORE: 'gcs',
          GCS_BUCKET: bucket,
          GCS_KEY_FILE: keyFile,
          GCS_PROJECT_ID: 'tiergraph-test',
          SEED_DEMO: 'true',
          DEMO_COMPANIES: '300',
        },
        null,
      );
    });

    afterAll(async () => {
      await t?.stop();
      if (mongoUrl) {
        const client = new MongoClient(mongoUrl);
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      }
      if (target) await emptyNeo4j(target);
      await target?.stop();
      if (keyDir) fs.rmSync(keyDir, { recursive: true, force: true });
    });

    async function json(res: Response): Promise<Json> {
      // The URL in the comparison names the request that failed.
      expect({ url: res.url, status: res.status }).toEqual({ url: res.url, status: 200 });
      return (await res.json()) as Json;
    }

    it('loads the demo into the empty Neo4j and serves search, profile, lists, edge, export and download', async () => {
      // The demo is in Neo4j, and search finds a company by its name.
      const page = await json(await t.get('/v1/companies/?limit=5'));
      const first = (page.results as Json[])[0]!;
      expect(first.vid).toEqual(expect.any(String));
      const word = String(first.name).split(/\s+/)[0]!;
      const found = await json(await t.get(`/v1/companies/?name=${encodeURIComponent(word)}`));
      expect((found.results as Json[]).map((c) => c.vid)).toContain(first.vid);

      // The busiest supplier of the page: its profile, and its customers' list.
      const hub = (page.results as Json[]).reduce((a, b) =>
        Number(b.count_customers) > Number(a.count_customers) ? b : a,
      );
      const vid = String(hub.vid);
      const profile = await json(await t.get(`/v1/companies/${vid}/`));
      expect(profile).toMatchObject({ vid, name: hub.name });
      expect(Array.isArray(profile.domains)).toBe(true);
      const customers = await json(await t.get(`/v1/companies/${vid}/customers/?limit=5`));
      const rows = customers.results as Json[];
      expect(rows.length).toBeGreaterThan(0);
      const relationship = rows[0]!.relationship as { relationship_id: string; edge_ids: string[] };
      const edgeId = relationship.edge_ids[0] ?? relationship.relationship_id;
      await json(await t.get(`/v1/companies/${vid}/suppliers/?limit=5`));

      // One relationship's evidence.
      const edge = await json(await t.get(`/v1/edges/${encodeURIComponent(edgeId)}/`));
      expect(JSON.stringify(edge)).toContain(edgeId);

      // A tier-view export, queued in MongoDB and written to the bucket.
      const started = await json(
        await t.post('/v1/tierviewjob/', {
          root_nodes: vid,
          num_tiers: '3',
          direction: 'customer',
          output_multiple_tables: 'yes',
        }),
      );
      const runId = Number(started.run_id);
      let view: Json = {};
      for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
        view = await json(await t.get(`/v1/jobs/${runId}`));
        if ((view.state as Json).life_cycle_state === 'TERMINATED') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(view.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' });
      const links = JSON.parse(String((view.output as Json).result)) as Record<string, string>;
      expect(Object.keys(links).sort()).toEqual(['companies_file', 'relationships_file', 'tiers_file']);

      // Each link is a V4-signed URL on the emulator; what it downloads is the export.
      for (const [name, link] of Object.entries(links)) {
        const url = new URL(link);
        expect(url.origin).toBe(new URL(EMULATOR).origin);
        expect(url.pathname.startsWith(`/${bucket}/`)).toBe(true);
        expect(url.searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
        const res = await fetch(link);
        expect(res.status).toBe(200);
        const csv = await res.text();
        const lines = csv.trim().split('\n');
        expect(lines.length).toBeGreaterThan(1);
        if (name === 'tiers_file' || name === 'companies_file') expect(csv).toContain(vid);
      }
    });
  });
}

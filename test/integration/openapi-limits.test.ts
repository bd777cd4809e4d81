import path from 'node:path';
import { PAGE_DEFAULTS } from '../../src/domain/params';
import { exampleOperation, explorerPage } from '../../src/http/explorer';
import { ROOT } from '../support/paths';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

// Limits none of which is a default, so a number copied into the document shows.
const SETTINGS_PAGE_SIZE = 37;
const SETTINGS = {
  MAX_PAGE_SIZE: String(SETTINGS_PAGE_SIZE),
  MAX_OFFSET: '1234',
  MAX_TIERS: '4',
  AUTH_FAILURE_MAX: '41',
  AUTH_FAILURE_WINDOW_S: '77',
  JOBS_MAX_QUEUED_PER_KEY: '9',
  DOWNLOAD_TTL_S: '555',
  CALLBACK_MAX_ATTEMPTS: '7',
};

interface Param {
  name: string;
  in: string;
  schema: { minimum?: number; maximum?: number; default?: unknown };
}
interface Doc {
  info: { description: string };
  paths: Record<string, Record<string, { parameters?: Param[]; description?: string }>>;
  components: {
    schemas: Record<string, { properties?: Record<string, { maximum?: number; description?: string }> }>;
  };
}

let t: TestServer;
let doc: Doc;
let text: string;
beforeAll(async () => {
  t = await startTestServer(SETTINGS);
  text = await (await fetch(`${t.base}/openapi.json`)).text();
  doc = JSON.parse(text) as Doc;
});
afterAll(async () => {
  await t.stop();
});

const params = (name: string) =>
  Object.values(doc.paths).flatMap((methods) =>
    Object.values(methods).flatMap((op) => (op.parameters ?? []).filter((p) => p.name === name)),
  );

describe('OpenAPI document of a server with its own limits', () => {
  it('states the configured page size and offset maxima and the page defaults on every paged route', () => {
    const offsets = params('offset');
    expect(offsets.length).toBeGreaterThanOrEqual(7);
    for (const p of offsets) {
      expect(p.schema).toMatchObject({ minimum: 0, maximum: 1234, default: PAGE_DEFAULTS.offset });
    }
    // Every route with an offset pages with the configured limit; the others (suggest, paths) have their own.
    const paged = Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods).filter((op) => (op.parameters ?? []).some((p) => p.name === 'offset')),
    );
    for (const op of paged) {
      const limit = op.parameters!.find((p) => p.name === 'limit');
      expect(limit?.schema).toMatchObject({ minimum: 1, maximum: 37, default: PAGE_DEFAULTS.limit });
    }
  });

  it('states the configured MAX_TIERS for tier-view runs and paths', () => {
    const body = doc.components.schemas.TierViewRequest?.properties?.num_tiers;
    expect(body?.maximum).toBe(4);
    expect(body?.description).toContain('MAX_TIERS (4 here)');
    const [maxTiers] = params('max_tiers');
    expect(maxTiers?.schema).toMatchObject({ minimum: 1, maximum: 4, default: 3 });
  });

  it('states the other settings it names with their running values', () => {
    expect(doc.info.description).toContain(
      'AUTH_FAILURE_MAX (41 here) within AUTH_FAILURE_WINDOW_S (77 s here)',
    );
    expect(text).toContain('JOBS_MAX_QUEUED_PER_KEY runs (9 here)');
    expect(text).toContain('DOWNLOAD_TTL_S seconds (555 here)');
    expect(text).toContain('CALLBACK_MAX_ATTEMPTS attempts (7 here)');
    expect(text).not.toMatch(/\(default (6|20|30|300 s|3600)\)|unless set/);
  });

  it('lists every value of output_multiple_tables that a run is started with', async () => {
    const stated = (
      doc.components.schemas.TierViewRequest?.properties?.output_multiple_tables as { enum?: unknown[] }
    ).enum;
    for (const value of ['yes', 'no', true, false, null]) {
      const res = await t.post('/v1/tierviewjob/', {
        root_nodes: 'boeing',
        num_tiers: '1',
        direction: 'supplier',
        output_multiple_tables: value,
      });
      expect([value, res.status, stated]).toEqual([value, 200, expect.arrayContaining([value])]);
    }
  });

  it('answers as it documents: the stated maxima are the ones enforced', async () => {
    expect((await t.get('/v1/companies/?limit=37&offset=1234')).status).toBe(200);
    expect((await t.get('/v1/companies/?limit=38')).status).toBe(400);
    expect((await t.get('/v1/companies/?offset=1235')).status).toBe(400);
    expect((await t.get('/v1/jobs/?limit=38')).status).toBe(400);
    const tiers = (n: number) =>
      t.post('/v1/tierviewjob/', { root_nodes: 'boeing', num_tiers: String(n), direction: 'supplier' });
    expect((await tiers(5)).status).toBe(400);
    const graphql = await t.post('/graphql', { query: '{ companies(limit: 38) { has_more } }' });
    expect(((await graphql.json()) as { errors?: unknown[] }).errors?.length).toBeGreaterThan(0);
  });

  it('the docs page renders the served document, and the explorer asks for no page beyond the maximum', async () => {
    const docs = await (await fetch(`${t.base}/docs`)).text();
    expect(docs).toContain("url: '/openapi.json'");
    expect(docs).not.toMatch(/MAX_PAGE_SIZE|MAX_OFFSET|MAX_TIERS|maximum/);
    // The page as the server fills in web/explorer.html (the built page is that file with its assets linked).
    const explorer = explorerPage('X-SERVICE-KEY', SETTINGS_PAGE_SIZE, path.join(ROOT, 'web'));
    const example = /<script type="application\/json" id="example-operation">([^<]*)<\/script>/.exec(
      explorer,
    )?.[1];
    const operation = JSON.parse(example ?? 'null') as string;
    const limits = [...operation.matchAll(/limit: (\d+)/g)].map((m) => Number(m[1]));
    expect(limits.length).toBeGreaterThan(0);
    for (const n of limits) expect(n).toBeLessThanOrEqual(SETTINGS_PAGE_SIZE);
    expect(Math.max(...[...exampleOperation(1).matchAll(/limit: (\d+)/g)].map((m) => Number(m[1])))).toBe(1);
  });
});

describe('a server whose MAX_TIERS is below the default path length', () => {
  let low: TestServer;
  beforeAll(async () => {
    low = await startTestServer({ MAX_TIERS: '2' });
  });
  afterAll(async () => {
    await low.stop();
  });

  it('documents max_tiers defaulting to MAX_TIERS and answers a paths call that leaves it out', async () => {
    const d = (await (await fetch(`${low.base}/openapi.json`)).json()) as Doc;
    const op = d.paths['/v1/paths/']?.get;
    expect(op?.parameters?.find((p) => p.name === 'max_tiers')?.schema).toMatchObject({
      maximum: 2,
      default: 2,
    });
    expect((await low.get('/v1/paths/?from=boeing&to=delta')).status).toBe(200);
    const g = await low.post('/graphql', { query: '{ paths(from: "boeing", to: "delta") { length } }' });
    expect(((await g.json()) as { errors?: unknown[] }).errors).toBeUndefined();
  });
});

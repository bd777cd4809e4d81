import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { checkHsCode, checkToken, normList, normWebsite } from '../../src/import/format';
import { NO_RELATIONSHIPS } from '../../src/services/tierview.service';
import { ROOT } from '../support/paths';
import { inCi } from '../support/services';
import { runCli } from '../support/cli';
import { startTestServer } from '../support/server';
import { TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

interface JobBody {
  run_id: string;
  state: {
    life_cycle_state: string;
    result_state?: string;
    state_message: string;
    user_cancelled_or_timedout: boolean;
  };
  output: null | { result?: string; truncated?: boolean };
}

const goldenFile = (name: string) => path.join(ROOT, 'test/fixtures/tierview', name);

/** The golden file's text; `UPDATE_GOLDEN=1` rewrites it from `actual` first (review the diff!). */
function golden(name: string, actual: string): string {
  if (process.env.UPDATE_GOLDEN === '1') {
    // Compared with itself, the file would hold whatever was written: CI compares, never writes.
    if (inCi()) throw new Error('UPDATE_GOLDEN is for a developer to review the diff; not under CI=true');
    fs.writeFileSync(goldenFile(name), canonical(actual));
  }
  return fs.readFileSync(goldenFile(name), 'utf8');
}

/** Header first, then rows sorted: rows of one tier come in the engine's order. */
const canonical = (csv: string) => {
  const [header, ...rows] = csv.split('\r\n');
  return [header, ...rows.filter((r) => r !== '').sort()].join('\r\n');
};

async function waitFor(t: TestServer, runId: number, done: (b: JobBody) => boolean): Promise<JobBody> {
  for (let i = 0; i < 300; i++) {
    const res = await t.get(`/v1/jobs/${runId}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as JobBody;
    if (done(body)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} did not reach the expected state`);
}

const terminated = (b: JobBody) =>
  b.state.life_cycle_state !== 'PENDING' && b.state.life_cycle_state !== 'RUNNING';

describe('tier-view jobs over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ JOBS_MAX_QUEUED_PER_KEY: '100' });
  });
  afterAll(async () => {
    await t.stop();
  });

  async function start(body: unknown): Promise<number> {
    const res = await t.post('/v1/tierviewjob/', body);
    expect(res.status).toBe(200);
    const json = (await res.json()) as { run_id: unknown };
    expect(Number.isInteger(json.run_id)).toBe(true);
    return json.run_id as number;
  }

  it('runs a single-table export to SUCCESS and serves the CSV through a signed link without a key', async () => {
    const runId = await start({
      root_nodes: 'boeing',
      num_tiers: '3',
      direction: 'supplier',
      min_evid_date: '2015-01-01',
      output_multiple_tables: 'no',
    });
    const body = await waitFor(t, runId, terminated);
    expect(body).toMatchObject({
      run_id: String(runId),
      state: {
        life_cycle_state: 'TERMINATED',
        result_state: 'SUCCESS',
        state_message: '',
        user_cancelled_or_timedout: false,
      },
      output: { truncated: false },
    });
    const result = JSON.parse(body.output!.result!) as Record<string, string>;
    expect(Object.keys(result)).toEqual(['tierview_file']);
    // The file is named by the id the client holds, not by the number the run is stored under.
    expect(new URL(result.tierview_file!).pathname).toMatch(
      new RegExp(`^/downloads/runs/${runId}/[0-9a-z]+/tierview-${runId}\\.csv$`),
    );
    const file = await fetch(result.tierview_file!);
    expect(file.status).toBe(200);
    const text = await file.text();
    expect(canonical(text)).toBe(canonical(golden('boeing-suppliers-3.csv', text)));
    // The trailing-slash form answers the same.
    const again = await t.get(`/v1/jobs/${runId}/`);
    expect(((await again.json()) as JobBody).state.result_state).toBe('SUCCESS');
  });

  it('writes three tables when asked, each with its own link', async () => {
    const runId = await start({
      root_nodes: 'delta',
      num_tiers: 4,
      direction: 'customer',
      output_multiple_tables: true,
    });
    const body = await waitFor(t, runId, terminated);
    expect(body.state.result_state).toBe('SUCCESS');
    const result = JSON.parse(body.output!.result!) as Record<string, string>;
    expect(Object.keys(result).sort()).toEqual(['companies_file', 'relationships_file', 'tiers_file']);
    for (const [key, name] of [
      ['relationships_file', 'delta-customers-4-relationships.csv'],
      ['tiers_file', 'delta-customers-4-tiers.csv'],
      ['companies_file', 'delta-customers-4-companies.csv'],
    ] as const) {
      const res = await fetch(result[key]!);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(canonical(text)).toBe(canonical(golden(name, text)));
    }
  });

  async function files(body: Record<string, unknown>): Promise<Record<string, Buffer>> {
    const done = await waitFor(t, await start(body), terminated);
    expect(done.state.result_state).toBe('SUCCESS');
    const links = JSON.parse(done.output!.result!) as Record<string, string>;
    const out: Record<string, Buffer> = {};
    for (const [k, link] of Object.entries(links))
      out[k] = Buffer.from(await (await fetch(link)).arrayBuffer());
    return out;
  }

  it('separates list elements with | as the import format does, so they read back through the import', async () => {
    const { relationships_file, companies_file } = await files({
      root_nodes: 'boeing',
      num_tiers: '1',
      direction: 'supplier',
      output_multiple_tables: 'yes',
    });
    const rels = parse<Record<string, string>>(relationships_file!, { columns: true });
    const e4 = rels.find((r) => r.edge_ids === 'e4')!;
    expect(e4.evidence_types).toBe('table|text');
    expect(normList(e4.evidence_types!, checkToken)).toEqual(['table', 'text']);
    expect(e4.hs_codes).toBe('');
    const e1 = rels.find((r) => r.edge_ids === 'e1')!;
    expect(normList(e1.hs_codes!, checkHsCode)).toEqual(['7326']);
    const companies = parse<Record<string, string>>(companies_file!, { columns: true });
    const boeing = companies.find((c) => c.vid === 'boeing')!;
    expect(normList(boeing.websites!, normWebsite)).toEqual(['https://www.boeing.example/']);
  });

  it('starts every file with a UTF-8 byte order mark only when asked to (csv_bom, for Excel)', async () => {
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
    const excel = await files({
      root_nodes: 'acme-gmbh',
      num_tiers: '1',
      direction: 'supplier',
      output_multiple_tables: 'yes',
      csv_bom: 'yes',
    });
    expect(Object.keys(excel).sort()).toEqual(['companies_file', 'relationships_file', 'tiers_file']);
    for (const [k, b] of Object.entries(excel)) expect([k, b.subarray(0, 3)]).toEqual([k, BOM]);
    // The mark is the only difference: the text after it is the file without it.
    expect(excel.companies_file!.subarray(3).toString('utf8')).toContain('Müller Präzisionstechnik GmbH');
    const plain = await files({
      root_nodes: 'acme-gmbh',
      num_tiers: '1',
      direction: 'supplier',
      csv_bom: false,
    });
    expect(plain.tierview_file!.subarray(0, 3).equals(BOM)).toBe(false);
    expect(plain.tierview_file!.toString('utf8').startsWith('root_node_name,')).toBe(true);
  });

  it('names the root in a single-file export even when it has no relationships, and says why', async () => {
    const runId = await start({ root_nodes: 'lonely', num_tiers: '2', direction: 'customer' });
    const body = await waitFor(t, runId, terminated);
    expect(body.state).toMatchObject({ result_state: 'SUCCESS', state_message: NO_RELATIONSHIPS });
    const link = (JSON.parse(body.output!.result!) as Record<string, string>).tierview_file!;
    const tierview_file = Buffer.from(await (await fetch(link)).arrayBuffer());
    const lines = tierview_file.toString('utf8').split('\r\n');
    expect(lines).toEqual([
      expect.stringMatching(/^root_node_name,/),
      `Lonely Island Trading,lonely${','.repeat(15)}`,
      '',
    ]);
  });

  it('refuses a tampered link', async () => {
    const runId = await start({ root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' });
    const body = await waitFor(t, runId, terminated);
    const link = (JSON.parse(body.output!.result!) as Record<string, string>).tierview_file!;
    const res = await fetch(
      link.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`),
    );
    expect(res.status).toBe(403);
  });

  it('names every bad field in one 400 problem document', async () => {
    const res = await t.post('/v1/tierviewjob/', {
      root_nodes: 'boeing',
      num_tiers: '0',
      direction: 'sideways',
      min_evid_date: '2023-02-30',
      output_multiple_tables: 'maybe',
      extra: 1,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((e) => e.field).sort()).toEqual([
      'body.direction',
      'body.extra',
      'body.min_evid_date',
      'body.num_tiers',
      'body.output_multiple_tables',
    ]);
    const tooDeep = await t.post('/v1/tierviewjob/', {
      root_nodes: 'boeing',
      num_tiers: '7',
      direction: 'supplier',
    });
    expect(tooDeep.status).toBe(400);
    const notJson = await t.post('/v1/tierviewjob/', '[1,2]');
    expect(notJson.status).toBe(400);
    // Fields named like what every object has are the body's too, not the path's.
    const inherited = await t.post(
      '/v1/tierviewjob/',
      '{"root_nodes":"boeing","num_tiers":"1","direction":"supplier","constructor":1,"__proto__":2}',
    );
    expect(inherited.status).toBe(400);
    const named = ((await inherited.json()) as { errors: { field: string }[] }).errors.map((e) => e.field);
    expect(named.sort()).toEqual(['body.__proto__', 'body.constructor']);
  });

  /** Runs a three-table export and reads its tiers file as vid → tier, with the final state message. */
  async function tiersOf(
    extra: Record<string, unknown>,
  ): Promise<{ tiers: Record<string, number>; message: string }> {
    const runId = await start({
      root_nodes: 'boeing',
      num_tiers: '3',
      direction: 'supplier',
      output_multiple_tables: 'yes',
      ...extra,
    });
    const body = await waitFor(t, runId, terminated);
    expect(body.state.result_state).toBe('SUCCESS');
    const result = JSON.parse(body.output!.result!) as Record<string, string>;
    const text = await (await fetch(result.tiers_file!)).text();
    const tiers: Record<string, number> = {};
    for (const line of text.split('\r\n').slice(1)) {
      if (!line) continue;
      const [vid, tier] = line.split(',');
      tiers[vid!] = Number(tier);
    }
    return { tiers, message: body.state.state_message };
  }

  it('walks only relationships at or above min_confidence', async () => {
    const r = await tiersOf({ min_confidence: '0.55' });
    expect(r.tiers).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1, 'acme-jp': 1, delta: 2 });
    expect(r.message).toBe('');
  });

  it('walks only into companies of the countries given by code or name', async () => {
    const r = await tiersOf({ countries: ['Deutschland', 'IND'] });
    expect(r.tiers).toEqual({ boeing: 0, delta: 1, 'acme-gmbh': 1, mueller: 2 });
  });

  it('keeps the strongest companies per tier and says in the final state how many were left out', async () => {
    const r = await tiersOf({ max_companies_per_tier: 2 });
    expect(r.tiers).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1, mueller: 2 });
    expect(r.message).toBe('max_companies_per_tier left out 2 companies (tier 1: 2)');
  });

  it('refuses bad filters with a 400 naming each field', async () => {
    const res = await t.post('/v1/tierviewjob/', {
      root_nodes: 'boeing',
      num_tiers: '2',
      direction: 'supplier',
      min_confidence: 2,
      countries: ['Atlantis'],
      max_companies_per_tier: 0,
      csv_bom: 'maybe',
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((e) => e.field).sort()).toEqual([
      'body.countries',
      'body.csv_bom',
      'body.max_companies_per_tier',
      'body.min_confidence',
    ]);
  });

  it('answers 404 for an unknown root or run, 400 for a malformed run id, and needs a key', async () => {
    expect(
      (await t.post('/v1/tierviewjob/', { root_nodes: 'nobody', num_tiers: '1', direction: 'supplier' }))
        .status,
    ).toBe(404);
    expect((await t.get('/v1/jobs/987654')).status).toBe(404);
    expect((await t.get('/v1/jobs/abc')).status).toBe(400);
    // One run, one address: a leading zero is refused, and the reason says so rather than "not an integer".
    const zero = await t.get('/v1/jobs/01/');
    expect(zero.status).toBe(400);
    const reasons = ((await zero.json()) as { errors: { reason: string }[] }).errors.map((e) => e.reason);
    expect(reasons).toEqual(['must be a positive integer without leading zeros']);
    expect((await fetch(`${t.base}/v1/jobs/1`)).status).toBe(401);
  });

  it('refuses a callback URL outside the allow-list', async () => {
    const res = await t.post('/v1/tierviewjob/', {
      root_nodes: 'boeing',
      num_tiers: '1',
      direction: 'supplier',
      callback_url: 'https://evil.example/hook',
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { field: string }[] };
    expect(problem.errors[0]!.field).toBe('body.callback_url');
  });

  it('queues many runs at once and finishes every one', async () => {
    const ids = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        start({
          root_nodes: i % 2 ? 'boeing' : 'delta',
          num_tiers: String((i % 4) + 1),
          direction: i % 2 ? 'supplier' : 'customer',
        }),
      ),
    );
    expect(new Set(ids).size).toBe(30);
    const ends = await Promise.all(ids.map((id) => waitFor(t, id, terminated)));
    expect(ends.map((b) => b.state.result_state)).toEqual(ids.map(() => 'SUCCESS'));
  });

  it('answers the same through GraphQL', async () => {
    const res = await t.post('/graphql', {
      query:
        'mutation { startTierView(input: {root_nodes: "boeing", num_tiers: 2, direction: supplier, csv_bom: true}) { run_id } }',
    });
    const json = (await res.json()) as { data: { startTierView: { run_id: number } } };
    const runId = json.data.startTierView.run_id;
    await waitFor(t, runId, terminated);
    const q = await t.post('/graphql', {
      query: `{ job(run_id: "${runId}") { run_id state { life_cycle_state result_state } output { truncated } } }`,
    });
    expect(await q.json()).toEqual({
      data: {
        job: {
          run_id: String(runId),
          state: { life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' },
          output: { truncated: false },
        },
      },
    });
    const withFile = await t.post('/graphql', { query: `{ job(run_id: "${runId}") { output { result } } }` });
    const result = ((await withFile.json()) as { data: { job: { output: { result: string } } } }).data.job
      .output.result;
    const file = await fetch((JSON.parse(result) as Record<string, string>).tierview_file!);
    expect([...new Uint8Array(await file.arrayBuffer()).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const bad = await t.post('/graphql', {
      query:
        'mutation { startTierView(input: {root_nodes: "boeing", num_tiers: 99, direction: supplier}) { run_id } }',
    });
    type Refused = {
      errors: { message: string; extensions: { code: string; errors?: { field: string }[] } }[];
    };
    const badJson = (await bad.json()) as Refused;
    expect(badJson.errors[0]!.extensions.code).toBe('BAD_REQUEST');
    // Named as the arguments sent, not as the REST body's fields.
    expect(badJson.errors[0]!.extensions.errors?.map((e) => e.field)).toEqual(['num_tiers']);
    expect(badJson.errors[0]!.message).toMatch(/^num_tiers: /);
    // The callback is checked by the queue as it takes the run, and named as an argument too.
    const badCallback = (await (
      await t.post('/graphql', {
        query:
          'mutation { startTierView(input: {root_nodes: "boeing", num_tiers: 1, direction: supplier, callback_url: "http://10.0.0.1/"}) { run_id } }',
      })
    ).json()) as Refused;
    expect(badCallback.errors[0]!.extensions.errors?.map((e) => e.field)).toEqual(['callback_url']);
    const badRun = (await (
      await t.post('/graphql', { query: '{ job(run_id: "abc") { run_id } }' })
    ).json()) as Refused;
    expect(badRun.errors[0]!.extensions.errors?.map((e) => e.field)).toEqual(['run_id']);
    // Over REST the same refusals name where they were sent, a field left out of the body included.
    const rest = (await (
      await t.post('/v1/tierviewjob/', { num_tiers: '2', direction: 'supplier' })
    ).json()) as {
      errors: { field: string }[];
    };
    expect(rest.errors.map((e) => e.field)).toEqual(['body.root_nodes']);
    const restRun = (await (await t.get('/v1/jobs/abc/')).json()) as { errors: { field: string }[] };
    expect(restRun.errors.map((e) => e.field)).toEqual(['path.run_id']);
  });
});

describe('a queue without a worker', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ JOBS_WORKER: 'false' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('keeps runs PENDING with their queue position, and cancels them', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.post('/v1/tierviewjob', {
        root_nodes: 'boeing',
        num_tiers: '2',
        direction: 'supplier',
      });
      ids.push(((await res.json()) as { run_id: number }).run_id);
    }
    const third = (await (await t.get(`/v1/jobs/${ids[2]}`)).json()) as JobBody;
    expect(third).toEqual({
      run_id: String(ids[2]),
      state: {
        life_cycle_state: 'PENDING',
        // The embedded queue is this process's own: with no worker here, the run would wait for ever.
        state_message:
          'queued: 2 runs ahead (up to 2 runs at once); but no worker takes runs from this queue (JOBS_WORKER=false)',
        user_cancelled_or_timedout: false,
      },
      output: null,
    });
    const canceled = await fetch(`${t.base}/v1/jobs/${ids[0]}`, {
      method: 'DELETE',
      headers: { 'X-SERVICE-KEY': 'test-key-0123456789abcdef' },
    });
    expect(((await canceled.json()) as JobBody).state).toMatchObject({
      life_cycle_state: 'TERMINATED',
      result_state: 'CANCELED',
      user_cancelled_or_timedout: true,
    });
    const viaPost = (await (await t.post(`/v1/jobs/${ids[1]}/cancel`, {})).json()) as JobBody;
    expect(viaPost.state.result_state).toBe('CANCELED');
    const now = (await (await t.get(`/v1/jobs/${ids[2]}`)).json()) as JobBody;
    expect(now.state.state_message).toBe(
      'queued: next to start (up to 2 runs at once); but no worker takes runs from this queue (JOBS_WORKER=false)',
    );
  });
});

describe('runs belong to the key that started them', () => {
  const OTHER = 'other-key-0123456789abcdef';
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      JOBS_WORKER: 'false',
      API_KEYS: `${TEST_KEY},${OTHER}`,
      JOBS_MAX_QUEUED_PER_KEY: '4',
    });
  });
  afterAll(async () => {
    await t.stop();
  });
  const asOther = { 'X-SERVICE-KEY': OTHER };
  const startRun = async (headers: Record<string, string> = {}) => {
    const res = await t.post(
      '/v1/tierviewjob/',
      { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' },
      headers,
    );
    return res;
  };

  it('another key gets 404 on read, cancel and delete, and lists only its own runs', async () => {
    const mine: number[] = [];
    for (let i = 0; i < 3; i++) mine.push(((await (await startRun()).json()) as { run_id: number }).run_id);
    const theirs = ((await (await startRun(asOther)).json()) as { run_id: number }).run_id;
    const id = mine[0]!;
    expect((await t.get(`/v1/jobs/${id}`, asOther)).status).toBe(404);
    const del = await fetch(`${t.base}/v1/jobs/${id}`, { method: 'DELETE', headers: asOther });
    expect(del.status).toBe(404);
    expect(del.headers.get('content-type')).toContain('application/problem+json');
    expect((await t.post(`/v1/jobs/${id}/cancel`, {}, asOther)).status).toBe(404);
    expect(((await (await t.get(`/v1/jobs/${id}`)).json()) as JobBody).state.life_cycle_state).toBe(
      'PENDING',
    );
    const gql = await t.post('/graphql', { query: `{ job(run_id: "${id}") { run_id } }` }, asOther);
    expect(
      ((await gql.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
    ).toBe('NOT_FOUND');

    const page1 = (await (await t.get('/v1/jobs/?limit=2')).json()) as {
      next: string | null;
      previous: string | null;
      results: JobBody[];
    };
    expect(page1.results.map((r) => Number(r.run_id))).toEqual([mine[2], mine[1]]);
    expect(page1.previous).toBeNull();
    expect(page1.next).toMatch(/\/v1\/jobs\/\?limit=2&offset=2$/);
    const page2 = (await (
      await t.get(new URL(page1.next!).pathname + new URL(page1.next!).search)
    ).json()) as {
      next: string | null;
      results: JobBody[];
    };
    expect(page2.results.map((r) => Number(r.run_id))).toEqual([mine[0]]);
    expect(page2.next).toBeNull();
    const other = (await (await t.get('/v1/jobs', asOther)).json()) as { results: JobBody[] };
    expect(other.results.map((r) => Number(r.run_id))).toEqual([theirs]);
    const listed = await t.post(
      '/graphql',
      { query: '{ jobs(limit: 5) { has_more results { run_id } } }' },
      asOther,
    );
    expect(await listed.json()).toEqual({
      data: { jobs: { has_more: false, results: [{ run_id: String(theirs) }] } },
    });
    expect((await t.get('/v1/jobs/?limit=0')).status).toBe(400);
  });

  it('refuses a start beyond JOBS_MAX_QUEUED_PER_KEY with 429 TOO_MANY_RUNS, per key', async () => {
    // The first test left this key 3 pending runs; the quota is 4.
    expect((await startRun()).status).toBe(200);
    const refused = await startRun();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe('TOO_MANY_RUNS');
    expect(problem.detail).toContain('4 runs pending or running');
    // As every 429 does: when to try again (a hint), and the key's request budget.
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.headers.get('ratelimit')).toMatch(/; r=\d+; t=\d+$/);
    // A canceled run frees its slot; the other key has slots of its own.
    const own = (await (await t.get('/v1/jobs/?limit=1')).json()) as { results: JobBody[] };
    await t.post(`/v1/jobs/${own.results[0]!.run_id}/cancel`, {});
    expect((await startRun()).status).toBe(200);
    expect((await startRun(asOther)).status).toBe(200);
  });
});

describe('a start under an Idempotency-Key', () => {
  const OTHER = 'other-key-fedcba9876543210';
  const THIRD = 'third-key-0123456789fedcba';
  let t: TestServer;
  beforeAll(async () => {
    // No worker: runs stay PENDING, so the quota of 2 holds while the test goes on.
    t = await startTestServer({
      JOBS_WORKER: 'false',
      API_KEYS: `${TEST_KEY},${OTHER},${THIRD}`,
      JOBS_MAX_QUEUED_PER_KEY: '2',
    });
  });
  afterAll(async () => {
    await t.stop();
  });
  const body = { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' };
  const start = (key: string, b: object = body, headers: Record<string, string> = {}) =>
    t.post('/v1/tierviewjob/', b, { 'Idempotency-Key': key, ...headers });
  const runIdOf = async (res: Response) => ((await res.json()) as { run_id: number }).run_id;
  const problemOf = async (res: Response) =>
    (await res.json()) as { code: string; detail: string; errors?: { field: string; reason: string }[] };

  it('starts one run per key: a retry gets that run back, marked, whatever the quota', async () => {
    const first = await start('retry-1');
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const runId = await runIdOf(first);
    // The same request written otherwise (key order, a number for the string), and the key quoted as a
    // structured-field string: one request, one key.
    const again = await start('"retry-1"', { direction: 'supplier', num_tiers: 1, root_nodes: 'boeing' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await runIdOf(again)).toBe(runId);
    const listed = (await (await t.get('/v1/jobs/')).json()) as { results: JobBody[] };
    expect(listed.results.map((r) => Number(r.run_id))).toEqual([runId]);

    // A second key fills the quota of 2; a third is refused, while both retries are still answered.
    const second = await runIdOf(await start('retry-2'));
    expect((await start('retry-3')).status).toBe(429);
    expect(await runIdOf(await start('retry-1'))).toBe(runId);
    expect(await runIdOf(await start('retry-2'))).toBe(second);
    // A start without a key is a new run, as always (refused here only by the quota).
    expect((await t.post('/v1/tierviewjob/', body)).status).toBe(429);
  });

  it('refuses the key with another request, and keys are per API key', async () => {
    const runId = await runIdOf(await start('shared-name', body, { 'X-SERVICE-KEY': OTHER }));
    const reused = await start('shared-name', { ...body, num_tiers: '2' }, { 'X-SERVICE-KEY': OTHER });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    const problem = await problemOf(reused);
    expect(problem.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(problem.detail).toContain(`run ${runId}`);
    // The test key's runs are its own: the other key's name means nothing to it (its quota refuses
    // the start, which would be a new run).
    expect((await start('shared-name')).status).toBe(429);
    const mine = (await (await t.get('/v1/jobs/')).json()) as { results: JobBody[] };
    expect(mine.results.map((r) => Number(r.run_id))).not.toContain(runId);
  });

  it('takes a default spelt out and the same default left out for one request', async () => {
    const as = { 'X-SERVICE-KEY': THIRD };
    const spelt = {
      ...body,
      output_multiple_tables: 'no',
      min_evid_date: null,
      csv_bom: 'no',
      min_confidence: 0,
    };
    const first = await runIdOf(await start('defaults-1', spelt, as));
    const plain = await start('defaults-1', body, as);
    expect([plain.status, plain.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(await runIdOf(plain)).toBe(first);
    // And the other way round.
    const second = await runIdOf(await start('defaults-2', body, as));
    const again = await start('defaults-2', { ...spelt, csv_bom: false, min_confidence: '0' }, as);
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(await runIdOf(again)).toBe(second);
    // A value that changes the files is another request.
    for (const changed of [{ min_confidence: 0.5 }, { csv_bom: 'yes' }, { output_multiple_tables: 'yes' }])
      expect((await start('defaults-1', { ...body, ...changed }, as)).status).toBe(422);
  });

  it('answers 400 for a key that is not 1 to 255 visible ASCII characters', async () => {
    for (const bad of ['with space', 'x'.repeat(256), 'ümlaut', '""']) {
      const res = await start(bad);
      expect(res.status).toBe(400);
      const problem = await problemOf(res);
      expect(problem.errors).toHaveLength(1);
      expect(problem.errors![0]!.field).toBe('header.Idempotency-Key');
      expect(problem.errors![0]!.reason).toContain('1 to 255 visible ASCII');
    }
    expect((await start('x'.repeat(255), body, { 'X-SERVICE-KEY': OTHER })).status).toBe(200);
  });

  it('works the same through GraphQL, where replayed says so', async () => {
    const mutation = `mutation ($key: String, $tiers: Int!) {
      startTierView(input: { root_nodes: "boeing", num_tiers: $tiers, direction: supplier }, idempotency_key: $key) {
        run_id replayed
      }
    }`;
    const run = async (key: string, tiers = 1) =>
      (await (
        await t.post('/graphql', { query: mutation, variables: { key, tiers } }, { 'X-SERVICE-KEY': OTHER })
      ).json()) as {
        data: { startTierView: { run_id: number; replayed: boolean } } | null;
        errors?: { extensions: { code: string } }[];
      };
    // The key the REST start of the test above used, and its request: the same run.
    const rest = (await (await t.get('/v1/jobs/', { 'X-SERVICE-KEY': OTHER })).json()) as {
      results: JobBody[];
    };
    const named = await run('shared-name');
    expect(named.data?.startTierView).toEqual({
      run_id: Number(rest.results.at(-1)!.run_id),
      replayed: true,
    });
    expect((await run('shared-name', 2)).errors?.[0]?.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await run('with space')).errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
  });
});

describe('run ids', () => {
  const OTHER = 'other-key-0123456789abcdef';
  const env = { JOBS_WORKER: 'false', API_KEYS: `${TEST_KEY},${OTHER}` };
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(env);
  });
  afterAll(async () => {
    await t.stop();
  });
  const startRun = async (headers: Record<string, string> = {}): Promise<number> => {
    const res = await t.post(
      '/v1/tierviewjob/',
      { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' },
      headers,
    );
    expect(res.status).toBe(200);
    return ((await res.json()) as { run_id: number }).run_id;
  };

  it('tell a key nothing of the runs other keys start, and outlive a restart', async () => {
    const first = await startRun();
    const theirs = [await startRun({ 'X-SERVICE-KEY': OTHER }), await startRun({ 'X-SERVICE-KEY': OTHER })];
    const second = await startRun();
    // The runs are stored 1, 2, 3, 4: a client must not read from its own two ids that two came between.
    const ids = [first, ...theirs, second];
    for (const id of ids) {
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id).toBeGreaterThanOrEqual(1);
      expect(id).toBeLessThanOrEqual(2 ** 30);
    }
    expect(new Set(ids).size).toBe(4);
    expect(second - first).not.toBe(3);
    expect(ids.slice(1).every((id, i) => id === ids[i]! + 1)).toBe(false);
    expect(ids.filter((id) => id <= 4)).toEqual([]);
    const seen = (await (await t.get(`/v1/jobs/${second}`)).json()) as JobBody;
    expect(seen.run_id).toBe(String(second));
    // A number next to a run's id is some other, unknown run.
    expect((await t.get(`/v1/jobs/${second + 1}`)).status).toBe(404);

    await t.stop(true);
    t = await startTestServer({ ...env, DATA_DIR: t.dataDir }, null);
    const again = await t.get(`/v1/jobs/${first}`);
    expect(again.status).toBe(200);
    expect(((await again.json()) as JobBody).run_id).toBe(String(first));
    const listed = (await (await t.get('/v1/jobs/')).json()) as { results: JobBody[] };
    expect(listed.results.map((r) => Number(r.run_id))).toEqual([second, first]);

    // An operator finds the row a client's id names with `tiergraph runs show`.
    const cliEnv = { DATA_DIR: t.dataDir, STORE: 'embedded', LOG_LEVEL: 'warn' };
    const shown = runCli(['runs', 'show', String(second)], cliEnv);
    expect(shown.err).toBe('');
    expect(shown.status).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({
      run_id: String(second),
      stored_as: 4,
      lifeCycleState: 'PENDING',
      request: { root_nodes: 'boeing', num_tiers: 1 },
    });
    const unknown = runCli(['runs', 'show', String(second + 1)], cliEnv);
    expect(unknown.status).toBe(1);
    expect(unknown.err).toBe(`No run ${second + 1} in the sqlite jobs database\n`);
  });
});

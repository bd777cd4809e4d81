import { rawRequest } from '../support/raw-http';
import { startTestServer, TEST_KEY } from '../support/server';
import type { TestServer } from '../support/server';

interface Job {
  state: { life_cycle_state: string; result_state?: string };
  output: { result?: string } | null;
}

/** The run's files once it has ended, polled at `base` (another name of the same server, say). */
async function filesOf(base: string, runId: number): Promise<Record<string, string>> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${base}/v1/jobs/${runId}/`, { headers: { 'X-SERVICE-KEY': TEST_KEY } });
    const job = (await res.json()) as Job;
    if (job.state.life_cycle_state === 'TERMINATED') {
      expect(job.state.result_state).toBe('SUCCESS');
      return JSON.parse(job.output!.result!) as Record<string, string>;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} did not end`);
}

const start = async (t: TestServer) =>
  (
    (await (
      await t.post('/v1/tierviewjob/', { root_nodes: 'boeing', num_tiers: '1', direction: 'supplier' })
    ).json()) as { run_id: number }
  ).run_id;

describe('download links without PUBLIC_URL', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('name the address each client reached the server by, and download from it', async () => {
    const runId = await start(t);
    for (const base of [`http://127.0.0.1:${t.running.port}`, `http://localhost:${t.running.port}`]) {
      const link = new URL((await filesOf(base, runId)).tierview_file!);
      expect(link.origin).toBe(base);
      const file = await fetch(link);
      expect(file.status).toBe(200);
      expect((await file.text()).split('\r\n')[0]).toContain('root_node');
    }
    // GraphQL's job, too.
    const viaGraphql = (await (
      await fetch(`http://localhost:${t.running.port}/graphql`, {
        method: 'POST',
        headers: { 'X-SERVICE-KEY': TEST_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ job(run_id: "${runId}") { output { result } } }` }),
      })
    ).json()) as { data: { job: { output: { result: string } } } };
    const files = JSON.parse(viaGraphql.data.job.output.result) as Record<string, string>;
    expect(new URL(files.tierview_file!).origin).toBe(`http://localhost:${t.running.port}`);
  });
});

describe('links without PUBLIC_URL, to a Host header that names no host', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('are not made: the request is refused', async () => {
    const url = `${t.base}/v1/companies/?limit=1`;
    const ok = await rawRequest(url, {
      'X-SERVICE-KEY': TEST_KEY,
      host: `Other-Host.example:${t.running.port}`,
    });
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.body.toString()) as { next: string }).next).toMatch(
      /^http:\/\/Other-Host\.example:\d+\//,
    );
    for (const host of ['a/b?c', 'evil.example/path', 'x@y', 'a b']) {
      const res = await rawRequest(url, { 'X-SERVICE-KEY': TEST_KEY, host });
      expect(`${host} ${res.status}`).toBe(`${host} 400`);
      const problem = JSON.parse(res.body.toString()) as { errors: { field: string }[] };
      expect(problem.errors[0]!.field).toBe('header.Host');
    }
  });
});

describe('download links with PUBLIC_URL', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ PUBLIC_URL: 'https://tiergraph.example.com' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('name the public address, whatever address the client used', async () => {
    const runId = await start(t);
    const link = (await filesOf(t.base, runId)).tierview_file!;
    expect(link.startsWith('https://tiergraph.example.com/downloads/runs/')).toBe(true);
  });
});

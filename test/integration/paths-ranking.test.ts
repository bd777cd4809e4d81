import { splitStatements } from '../../src/store/cypher-files';
import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

/**
 * 400 two-hop chains from `ps` to `pt`, one through each `pm-i`, with confidences
 * spread so that the chain order by weakest hop is known. The best chain is not
 * the one the engine happens to read first.
 */
const MIDS = 400;
const BEST = 137;
const conf = (i: number, hop: number) =>
  i === BEST ? 0.99 : Math.round((0.1 + (((i * 7919 + hop * 104729) % 997) / 997) * 0.8) * 1000) / 1000;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  const company = (vid: string, suppliers: number, customers: number) =>
    `CREATE (:Company {vid: '${vid}', name: 'Chain ${vid}', is_cluster_parent: true, cluster_size: 1, ` +
    `count_suppliers: ${suppliers}, count_customers: ${customers}, count_supplier_evidence: 0, count_customer_evidence: 0})`;
  const supplies = (s: string, c: string, id: string, confidence: number) =>
    `MATCH (s:Company {vid: '${s}'}), (c:Company {vid: '${c}'}) CREATE (s)-[:SUPPLIES {edge_id: '${id}', ` +
    `confidence_score: ${confidence}, latest_edge_date: timestamp('2024-01-01T00:00:00Z'), status_code: 1}]->(c)`;
  const statements = [company('ps', 0, MIDS), company('pt', MIDS, 0)];
  for (let i = 0; i < MIDS; i++) {
    statements.push(company(`pm-${i}`, 1, 1));
    statements.push(supplies('ps', `pm-${i}`, `pa-${i}`, conf(i, 0)));
    statements.push(supplies(`pm-${i}`, 'pt', `pb-${i}`, conf(i, 1)));
  }
  await t.running.store.runScript(splitStatements(statements.join(';\n')));
}, 120_000);
afterAll(async () => {
  await t.stop();
});

interface Chain {
  length: number;
  weakest_confidence: number | null;
  companies: { vid: string; name: string }[];
  hops: { relationship_id: string; confidence_score: number | null }[];
}

describe('GET /v1/paths/ among many chains of one length', () => {
  it('returns the chains with the strongest weakest hop, whichever the graph reads first', async () => {
    const expected = Array.from({ length: MIDS }, (_, i) => ({
      i,
      weakest: Math.min(conf(i, 0), conf(i, 1)),
    }))
      .sort((a, b) => b.weakest - a.weakest || (`pa-${a.i}` < `pa-${b.i}` ? -1 : 1))
      .slice(0, 5);
    expect(expected[0]!.i).toBe(BEST);

    const res = await t.get('/v1/paths/?from=ps&to=pt&direction=customer&limit=5');
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: Chain[] };
    expect(results.map((c) => c.companies.map((x) => x.vid))).toEqual(
      expected.map(({ i }) => ['ps', `pm-${i}`, 'pt']),
    );
    expect(results.map((c) => c.weakest_confidence)).toEqual(expected.map((e) => e.weakest));
    expect(results[0]!.companies[1]!.name).toBe(`Chain pm-${BEST}`);

    // The same chains read from the customer end towards its suppliers.
    const up = (await (await t.get('/v1/paths/?from=pt&to=ps&direction=supplier&limit=1')).json()) as {
      results: Chain[];
    };
    expect(up.results.map((c) => c.companies.map((x) => x.vid))).toEqual([['pt', `pm-${BEST}`, 'ps']]);
    expect(up.results[0]!.hops.map((h) => h.relationship_id)).toEqual([`pb-${BEST}`, `pa-${BEST}`]);
  });
});

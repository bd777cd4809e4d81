import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

interface MapNode {
  vid: string;
  tier: number;
  hidden: number;
  expanded: boolean;
}
interface TierMap {
  root: string;
  truncated: boolean;
  hidden: number;
  nodes: MapNode[];
  edges: { supplier_id: string; customer_id: string; confidence_score: number }[];
}
interface Result {
  data?: { tierMap: TierMap } | null;
  errors?: { extensions?: { code?: string; errors?: { field: string }[] } }[];
}

const QUERY = `query ($vid: ID!, $direction: TierDirection, $tiers: Int, $c: Float, $date: Date, $per: Int, $max: Int) {
  tierMap(vid: $vid, direction: $direction, tiers: $tiers, min_confidence: $c, date: $date, per_node: $per, max_nodes: $max) {
    root truncated hidden
    nodes { vid tier hidden expanded }
    edges { supplier_id customer_id confidence_score }
  }
}`;

async function tierMap(variables: Record<string, unknown>): Promise<Result> {
  const res = await t.post('/graphql', { query: QUERY, variables });
  return (await res.json()) as Result;
}

const tiers = (m: TierMap) => Object.fromEntries(m.nodes.map((n) => [n.vid, n.tier]));
const pairs = (m: TierMap) => m.edges.map((e) => `${e.supplier_id}>${e.customer_id}`).sort();

describe('GraphQL tierMap', () => {
  it('places each company on its shortest tier and keeps the relationships between drawn companies', async () => {
    const { data, errors } = await tierMap({ vid: 'boeing', tiers: 2 });
    expect(errors).toBeUndefined();
    const m = data!.tierMap;
    expect(m.root).toBe('boeing');
    expect(tiers(m)).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1, 'acme-jp': 1, delta: 1, mueller: 2 });
    // delta -> bolt joins two tier-1 companies: drawn, without moving delta to tier 2.
    expect(pairs(m)).toEqual([
      'acme-gmbh>boeing',
      'acme-jp>boeing',
      'bolt>boeing',
      'delta>boeing',
      'delta>bolt',
      'mueller>acme-gmbh',
    ]);
    expect(m.truncated).toBe(false);
    expect(m.hidden).toBe(0);
    expect(m.nodes.find((n) => n.vid === 'mueller')!.expanded).toBe(false);
  });

  it('draws only the strongest counterparts of each company and counts the rest', async () => {
    const m = (await tierMap({ vid: 'boeing', tiers: 1, per: 2 })).data!.tierMap;
    expect(tiers(m)).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1 });
    expect(m.nodes.find((n) => n.vid === 'boeing')!.hidden).toBe(2);
    expect(m.hidden).toBe(2);
  });

  it('stops at the node budget and says so', async () => {
    const m = (await tierMap({ vid: 'boeing', tiers: 3, max: 3 })).data!.tierMap;
    expect(m.nodes).toHaveLength(3);
    expect(m.truncated).toBe(true);
  });

  it('walks customers and applies the confidence and date filters', async () => {
    const down = (await tierMap({ vid: 'delta', direction: 'customer', tiers: 2 })).data!.tierMap;
    expect(tiers(down)).toEqual({ delta: 0, boeing: 1, bolt: 1, mueller: 2 });
    const strong = (await tierMap({ vid: 'boeing', tiers: 1, c: 0.75 })).data!.tierMap;
    expect(tiers(strong)).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1 });
    const recent = (await tierMap({ vid: 'boeing', tiers: 1, date: '2023-01-01' })).data!.tierMap;
    expect(tiers(recent)).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1 });
  });

  it('refuses more than three tiers and an unknown company', async () => {
    const deep = await tierMap({ vid: 'boeing', tiers: 4 });
    expect(deep.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    expect(deep.errors?.[0]?.extensions?.errors?.[0]?.field).toBe('tiers');
    // Worded as every other range refusal, not in the validation library's words.
    const none = await tierMap({ vid: 'boeing', tiers: 0 });
    expect(none.errors?.[0]?.extensions?.errors).toEqual([{ field: 'tiers', reason: 'must be at least 1' }]);
    const empty = await tierMap({ vid: '' });
    expect(empty.errors?.[0]?.extensions?.errors).toEqual([{ field: 'vid', reason: 'must not be empty' }]);
    const unknown = await tierMap({ vid: 'nobody' });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

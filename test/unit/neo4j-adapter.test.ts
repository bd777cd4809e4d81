import neo4j from 'neo4j-driver';
import { AppError } from '../../src/domain/errors';
import type { TierCompany, TierRelationship } from '../../src/domain/tier-walk';
import { NEO4J_QUERY_NAMES, Neo4jGraphStore, openFailure } from '../../src/store/neo4j/neo4j.store';
import { FakeNeo4jDriver, driverDateTime, driverError } from '../support/fake-neo4j';
import type { RecordedRun, Responder } from '../support/fake-neo4j';

function storeWith(respond: Responder) {
  const fake = new FakeNeo4jDriver(respond);
  const store = new Neo4jGraphStore({
    uri: 'neo4j://unused:7687',
    user: 'neo4j',
    password: 'x',
    database: 'testdb',
    maxPoolSize: 5,
    acquireTimeoutMs: 1000,
    connectTimeoutMs: 1000,
    queryTimeoutMs: 2500,
    importBatchSize: 100,
    generationPollMs: 60_000,
    migrateOnOpen: false,
    driver: fake.asDriver(),
  });
  return { fake, store };
}

const company = (vid: string, extra: Record<string, unknown> = {}) => ({
  vid,
  cid_id: vid,
  name: `Company ${vid}`,
  company_legal_name: null,
  domiciled_country: 'Germany',
  websites: '[https://example.com/]',
  is_public: false,
  count_suppliers: 1,
  count_customers: 2,
  ...extra,
});

describe('Neo4j adapter, against a recording driver', () => {
  it('reads a profile in a READ session of the configured database, labelled and time-limited', async () => {
    const { fake, store } = storeWith((run) =>
      run.query === 'company/get-profile'
        ? [{ ...company('boeing'), identifiers: '[{"type":"LEI","value":"X1"}]', addresses: '[]' }]
        : [],
    );
    const p = await store.getCompany('boeing');
    expect(p).toMatchObject({
      vid: 'boeing',
      websites: ['https://example.com/'],
      identifiers: [{ type: 'LEI', value: 'X1' }],
    });
    expect(fake.runs).toEqual([
      expect.objectContaining({
        query: 'company/get-profile',
        mode: neo4j.session.READ,
        database: 'testdb',
        params: { vid: 'boeing' },
        timeout: 2500,
      }),
    ]);
    expect(fake.closed).toBe(fake.opened);
  });

  it('sends SKIP/LIMIT as Neo4j integers and the date filter as a UTC datetime, then fetches the page in one query', async () => {
    const { fake, store } = storeWith((run) => {
      if (run.query === 'relationship/list-suppliers')
        return [
          {
            counterpart_vid: 'a',
            relationship_id: 'e1',
            confidence_score: 0.9,
            latest_relationship_date: driverDateTime('2024-01-01T00:00:00Z'),
            evidence_types: '[text]',
            edge_ids: ['e1'],
          },
          {
            counterpart_vid: 'b',
            relationship_id: 'e2',
            confidence_score: 0.8,
            latest_relationship_date: null,
            evidence_types: '[]',
            edge_ids: ['e2'],
          },
        ];
      if (run.query === 'company/get-summaries')
        return (run.params.vids as string[]).map((v) => ({ vid: v, name: `N ${v}`, country: 'Japan' }));
      return [];
    });
    const page = await store.listRelationships('root', 'suppliers', 'company', {
      minConfidence: 0.5,
      evidenceFrom: new Date('2020-02-03T00:00:00Z'),
      limit: 1,
      offset: 10,
    });
    expect(page.hasMore).toBe(true);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.counterpart).toMatchObject({ vid: 'a', name: 'N a', country: 'Japan' });
    expect(page.items[0]!.relationship.latest_relationship_date).toBe('2024-01-01T00:00:00.000Z');
    const list = fake.runs[0]!;
    expect(neo4j.isInt(list.params.skip)).toBe(true);
    expect(neo4j.isInt(list.params.limit)).toBe(true);
    expect(String(list.params.limit)).toBe('2');
    expect(neo4j.isDateTime(list.params.evidence_from)).toBe(true);
    expect(String(list.params.evidence_from)).toBe('2020-02-03T00:00:00Z');
    expect(list.params).toMatchObject({ vid: 'root', min_confidence: 0.5, any_date: false });
    expect(fake.runs[1]).toMatchObject({ query: 'company/get-summaries', params: { vids: ['a'] } });
  });

  it('reads a path-search step in a READ session, the frontier as a parameter', async () => {
    const { fake, store } = storeWith((run) =>
      run.query === 'path/step-suppliers'
        ? [
            {
              from_vid: 't',
              to_vid: 'm',
              edge_id: 'e1',
              confidence_score: 0.4,
              latest_evidence_date: driverDateTime('2022-05-06T00:00:00Z'),
              to_degree: neo4j.int(3),
            },
          ]
        : [],
    );
    expect(await store.pathSteps(['t', 'u'], 'suppliers')).toEqual([
      {
        from: 't',
        to: 'm',
        edge_id: 'e1',
        confidence_score: 0.4,
        latest_evidence_date: '2022-05-06T00:00:00.000Z',
        toDegree: 3,
      },
    ]);
    expect(fake.runs[0]).toMatchObject({
      query: 'path/step-suppliers',
      mode: neo4j.session.READ,
      params: { vids: ['t', 'u'] },
    });
    // An empty frontier reads nothing.
    expect(await store.pathSteps([], 'customers')).toEqual([]);
    expect(fake.runs).toHaveLength(1);
  });

  it('walks tiers breadth-first: each company in its nearest tier, relationships only between consecutive tiers', async () => {
    // Suppliers: r <- a, b; a <- c, b; c <- r (a cycle back to the root); b <- d.
    const suppliersOf: Record<string, string[]> = { r: ['a', 'b'], a: ['c', 'b'], c: ['r'], b: ['d'] };
    const { fake, store } = storeWith((run) => {
      if (run.query === 'company/get-profile') return run.params.vid === 'r' ? [company('r')] : [];
      if (run.query !== 'tierview/step-suppliers') return [];
      return (run.params.vids as string[]).flatMap((from) =>
        (suppliersOf[from] ?? []).map((to) => ({
          from_vid: from,
          ...Object.fromEntries(Object.entries(company(to)).map(([k, v]) => [`to_${k}`, v])),
          edge_id: `${to}->${from}`,
          confidence_score: 0.5,
          status_code: 1,
          hs_codes: '[]',
          evidence_types: '[text]',
          latest_evidence_date: driverDateTime('2022-05-06T00:00:00Z'),
        })),
      );
    });
    const companies: TierCompany[] = [];
    const rels: [number, TierRelationship][] = [];
    const found = await store.walkTiers(
      { root: 'r', direction: 'suppliers', tiers: 3, evidenceFrom: '2015-01-01' },
      {
        companies: (b) => void companies.push(...b),
        relationships: (tier, b) => void rels.push(...b.map((r): [number, TierRelationship] => [tier, r])),
      },
    );
    expect(found).toBe(true);
    expect(companies.map((c) => [c.vid, c.tier])).toEqual([
      ['r', 0],
      ['a', 1],
      ['b', 1],
      ['c', 2],
      ['d', 2],
    ]);
    expect(rels.map(([t, r]) => [t, r.edge_id, r.supplier.vid, r.customer.vid])).toEqual([
      [0, 'a->r', 'a', 'r'],
      [0, 'b->r', 'b', 'r'],
      [1, 'c->a', 'c', 'a'],
      [1, 'd->b', 'd', 'b'],
    ]);
    expect(rels[0]![1].latest_evidence_date).toBe('2022-05-06');
    const steps = fake.runs.filter((r: RecordedRun) => r.query === 'tierview/step-suppliers');
    expect(String(steps[0]!.params.evidence_from)).toBe('2015-01-01T00:00:00Z');
    expect(fake.closed).toBe(fake.opened);
  });

  it('answers false for an unknown root without walking', async () => {
    const { fake, store } = storeWith(() => []);
    const sink = { companies: jest.fn(), relationships: jest.fn() };
    await expect(
      store.walkTiers({ root: 'nobody', direction: 'customers', tiers: 2, evidenceFrom: null }, sink),
    ).resolves.toBe(false);
    expect(sink.companies).not.toHaveBeenCalled();
    expect(fake.runs.map((r) => r.query)).toEqual(['company/get-profile']);
  });

  it('maps an unreachable database to 503 UNAVAILABLE and still closes the session', async () => {
    const { fake, store } = storeWith(() => {
      throw driverError('connection refused', 'ServiceUnavailable');
    });
    const err: unknown = await store.getEdge('e1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('UNAVAILABLE');
    // An outage passes by itself: the answer says when to come back, and an export waits for it.
    expect((err as AppError).retryAfterS).toBe(5);
    expect(fake.closed).toBe(fake.opened);
  });

  it('maps a query over its time limit to 503 UNAVAILABLE without a time to come back', async () => {
    const { store } = storeWith(() => {
      throw driverError('timed out', 'Neo.ClientError.Transaction.TransactionTimedOut');
    });
    const err: unknown = await store.getEdge('e1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toMatch(/^The graph database did not answer in time/);
    expect((err as AppError).retryAfterS).toBeUndefined();
  });

  it('leaves a query the server rejects as an internal error', async () => {
    const { store } = storeWith(() => {
      throw driverError('Invalid input', 'Neo.ClientError.Statement.SyntaxError');
    });
    const err: unknown = await store.getEdge('e1').catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(AppError);
    expect((err as Error).message).toBe('Invalid input');
  });

  it('writes seeds in WRITE sessions, translated to Neo4j, and raises the graph generation', async () => {
    const { fake, store } = storeWith((run) =>
      run.query === 'graph/bump-generation' ? [{ generation: 7 }] : [],
    );
    const before = store.generation;
    await store.runScript([
      "CREATE (:Company {vid: 'x', incorporation_date: timestamp('2020-01-01T00:00:00Z')})",
    ]);
    expect(fake.runs[0]).toMatchObject({
      query: 'seed',
      mode: neo4j.session.WRITE,
      text: "CREATE (:Company {vid: 'x', incorporation_date: datetime('2020-01-01T00:00:00Z')})",
    });
    expect(fake.runs[1]).toMatchObject({ query: 'graph/bump-generation', mode: neo4j.session.WRITE });
    expect(store.generation).toBe(before + 1);
  });

  it('never lets the driver run a seed statement a second time', async () => {
    const { fake, store } = storeWith(() => []);
    await store.runScript(["CREATE (:Company {vid: 'x'})"]);
    expect(fake.runs[0]?.query).toBe('seed');
    // The first session is the seed's; a retried CREATE whose first commit went through duplicates nodes.
    expect(fake.sessions[0]).toMatchObject({ disableAutoCommitRetries: true });
  });

  it('links every session through one bookmark manager, so a read sees the writes before it', async () => {
    const { fake, store } = storeWith((run) =>
      run.query === 'graph/bump-generation' ? [{ generation: 1 }] : [],
    );
    await store.runScript(["CREATE (:Company {vid: 'x'})"]);
    await store.getCompany('x');
    expect(fake.sessions.length).toBeGreaterThanOrEqual(3);
    const managers = new Set(fake.sessions.map((s) => s.bookmarkManager));
    expect(managers.size).toBe(1);
    expect([...managers][0]).toBeDefined();
  });

  it('labels every query it loads with its own name', () => {
    expect(new Set(NEO4J_QUERY_NAMES).size).toBe(NEO4J_QUERY_NAMES.length);
  });
});

describe('a Neo4j store that cannot open', () => {
  const options = { uri: 'bolt://reader:secret@db.example:7687', user: 'reader', database: 'graph' };

  it('names the settings to check for each reason the driver gives', () => {
    const say = (message: string, code: string) => openFailure(options, driverError(message, code));
    expect(
      say(
        'The client is unauthorized due to authentication failure.',
        'Neo.ClientError.Security.Unauthorized',
      ),
    ).toBe(
      'Neo4j at bolt://db.example:7687 refused the login of user "reader": check NEO4J_USER and NEO4J_PASSWORD',
    );
    expect(say('Database does not exist.', 'Neo.ClientError.Database.DatabaseNotFound')).toBe(
      'Neo4j at bolt://db.example:7687 has no database "graph": create it, or set NEO4J_DATABASE to one it has',
    );
    expect(say('Could not perform discovery.\nmore lines', 'ServiceUnavailable')).toBe(
      'Neo4j does not answer at bolt://db.example:7687 (NEO4J_URI): Could not perform discovery.',
    );
    expect(say('Something else.', 'Neo.DatabaseError.General.UnknownError')).toBe(
      'Neo4j at bolt://db.example:7687 (NEO4J_URI) could not be opened: Something else.',
    );
  });

  it('fails to open with that message, the driver error as its cause', async () => {
    const refused = driverError('The client is unauthorized.', 'Neo.ClientError.Security.Unauthorized');
    const { fake, store } = storeWith(() => []);
    fake.getServerInfo = () => Promise.reject(refused);
    const failure = await store.open().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(failure?.message).toMatch(
      /refused the login of user "neo4j": check NEO4J_USER and NEO4J_PASSWORD$/,
    );
    expect(failure?.cause).toBe(refused);
  });
});

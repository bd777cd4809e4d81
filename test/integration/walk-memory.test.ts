import fs from 'node:fs';
import path from 'node:path';
import type { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import type { TierCompany, TierRelationship } from '../../src/domain/tier-walk';
import type { PathStep, TierWalkRequest } from '../../src/store/graph-store';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import { splitStatements } from '../../src/store/cypher-files';
import { readSeed, tempDir } from '../support/paths';
import { importDirectory } from '../../src/import/import-directory';
import * as stagingFile from '../../src/store/staging-file';
import { closeWhileExportRead } from '../support/engine-exports';
import { companyRow, relationshipRow, writeImportDir } from '../support/factories';
import { openSeededStore } from '../support/seeded-store';

/** Tier walks over the relationships the embedded store holds in memory (walk-memory.ts). */
describe('embedded store: tier walks from memory', () => {
  let dir: string;
  let logged: string[];
  beforeEach(() => {
    dir = tempDir('walk-memory');
    logged = [];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** `seed` false: reopen the graph as it is (the seed counts as a change of the data). */
  const open = (walkMemory: EmbeddedStoreOptions['walkMemory'], seed = true) =>
    openSeededStore(dir, logged, { walkMemory }, seed);

  const walk = async (store: EmbeddedGraphStore, request: Partial<TierWalkRequest> = {}) => {
    const rows: TierRelationship[] = [];
    await store.walkTiers(
      {
        root: 'boeing',
        direction: 'suppliers',
        tiers: 3,
        evidenceFrom: null,
        companyDetails: false,
        ...request,
      },
      { companies: () => undefined, relationships: (_t, b) => void rows.push(...b) },
    );
    return rows;
  };
  const count = (text: string) => logged.filter((l) => l.includes(text)).length;
  const queryAll = { minConfidence: 0, evidenceFrom: null, limit: 50, offset: 0 };
  /** The companies of the test seed. */
  const SEED_VIDS = ['acme-gmbh', 'acme-hold', 'acme-jp', 'boeing', 'bolt', 'delta', 'lonely', 'mueller'];

  /**
   * Runs `body` with two stores of the same graph (the test seed unless `seed` is false): one holding
   * the walk memory, one answering from the engine alone; closes both after.
   */
  const withBoth = async (
    body: (memory: EmbeddedGraphStore, engine: EmbeddedGraphStore) => Promise<void>,
    seed = true,
  ) => {
    const memory = await open('wait', seed);
    const memoryDir = dir;
    dir = tempDir('walk-engine');
    const engine = await open('off', seed);
    try {
      await body(memory, engine);
    } finally {
      await memory.close();
      await engine.close();
      fs.rmSync(memoryDir, { recursive: true, force: true });
    }
  };
  const held = () => count('relationships held in memory');
  /** List pages to compare: the first (of `firstLimit`), filtered by confidence and by date, later ones. */
  const pageQueries = (firstLimit: number) => [
    { minConfidence: 0, evidenceFrom: null, limit: firstLimit, offset: 0 },
    { minConfidence: 0.6, evidenceFrom: null, limit: 10, offset: 0 },
    { minConfidence: 0, evidenceFrom: new Date('2022-01-01T00:00:00Z'), limit: 10, offset: 0 },
    { minConfidence: 0, evidenceFrom: null, limit: 1, offset: 1 },
    { minConfidence: 0, evidenceFrom: null, limit: 2, offset: 5 },
  ];

  it('answers every walk as the engine does, company details and filters included', async () => {
    await withBoth(async (memory, engine) => {
      const everything = async (store: EmbeddedGraphStore, request: TierWalkRequest) => {
        const companies: TierCompany[] = [];
        const rows: TierRelationship[] = [];
        const dropped: Record<number, number> = {};
        await store.walkTiers(request, {
          companies: (b) => void companies.push(...b),
          relationships: (_t, b) => void rows.push(...b),
          dropped: (t, n) => void (dropped[t] = n),
        });
        const key = (x: { vid?: string; edge_id?: string }) => x.vid ?? x.edge_id ?? '';
        // Without details a store may leave them empty (the engine does; the memory need not).
        const shown = (c: TierCompany): Partial<TierCompany> =>
          request.companyDetails === false
            ? {
                vid: c.vid,
                tier: c.tier,
                name: c.name,
                company_legal_name: c.company_legal_name,
                cid_id: c.cid_id,
              }
            : c;
        return {
          companies: companies.sort((a, b) => key(a).localeCompare(key(b))).map(shown),
          rows: rows
            .sort((a, b) => key(a).localeCompare(key(b)))
            .map((r) => ({ ...r, supplier: shown(r.supplier), customer: shown(r.customer) })),
          dropped,
        };
      };
      const requests: TierWalkRequest[] = [];
      for (const direction of ['suppliers', 'customers'] as const)
        for (const extra of [
          {},
          { evidenceFrom: '2020-01-01' },
          { minConfidence: 0.55 },
          { countries: ['DE', 'IN', 'US'] },
          { maxCompaniesPerTier: 2 },
        ])
          for (const companyDetails of [true, false])
            requests.push({
              root: direction === 'suppliers' ? 'boeing' : 'delta',
              direction,
              tiers: 4,
              evidenceFrom: null,
              companyDetails,
              ...extra,
            });
      for (const request of requests) {
        const fromMemory = await everything(memory, request);
        expect(fromMemory).toEqual(await everything(engine, request));
      }
      expect(held()).toBe(1);
    });
  });

  it('reads only the names a row shows when the walk needs no company details', async () => {
    const store = await open('wait');
    try {
      const companies = async (companyDetails: boolean) => {
        const seen: TierCompany[] = [];
        await store.walkTiers(
          { root: 'boeing', direction: 'suppliers', tiers: 3, evidenceFrom: null, companyDetails },
          { companies: (b) => void seen.push(...b), relationships: () => undefined },
        );
        return seen.filter((c) => c.tier > 0).sort((a, b) => a.vid.localeCompare(b.vid));
      };
      const full = await companies(true);
      const lean = await companies(false);
      expect(held()).toBe(1);
      const acme = full.find((c) => c.vid === 'acme-gmbh')!;
      expect(acme.websites).toEqual(['https://www.acmegmbh.example/']);
      expect(acme.domiciled_country).toBe('Germany');
      // The same companies and names; their details left empty, as the engine's own walk leaves them.
      expect(lean.map((c) => [c.vid, c.tier, c.name, c.company_legal_name, c.cid_id])).toEqual(
        full.map((c) => [c.vid, c.tier, c.name, c.company_legal_name, c.cid_id]),
      );
      for (const c of lean)
        expect(c).toMatchObject({
          websites: [],
          domiciled_country: null,
          is_public: null,
          count_customers: 0,
        });
    } finally {
      await store.close();
    }
  });

  it('answers every plain list page as the engine does, filters and offsets included', async () => {
    await withBoth(async (memory, engine) => {
      const vids = [...SEED_VIDS, 'nobody'];
      const queries = pageQueries(10);
      let items = 0;
      for (const vid of vids)
        for (const direction of ['suppliers', 'customers'] as const)
          for (const query of queries) {
            const fromMemory = await memory.listRelationships(vid, direction, 'company', query);
            expect(fromMemory).toEqual(await engine.listRelationships(vid, direction, 'company', query));
            items += fromMemory.items.length;
          }
      expect(items).toBeGreaterThan(20);
      expect(held()).toBe(1);
    });
  });

  it('answers path-search steps as the engine does, without asking it', async () => {
    await withBoth(async (memory, engine) => {
      const vids = SEED_VIDS;
      const byEdge = (steps: PathStep[]) =>
        [...steps].sort((a, b) => a.edge_id.localeCompare(b.edge_id) || a.from.localeCompare(b.from));
      // The first step waits for the memory, which is read through the engine.
      await memory.pathSteps(['boeing'], 'suppliers');
      const query = jest.spyOn(ConnectionPool.prototype, 'query');
      const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
      let rows = 0;
      try {
        for (const direction of ['suppliers', 'customers'] as const) {
          const frontiers = [...vids.map((v) => [v]), vids, ['nobody'], ['bolt', 'bolt', 'nobody']];
          for (const frontier of frontiers) {
            query.mockClear();
            stream.mockClear();
            const fromMemory = await memory.pathSteps(frontier, direction);
            expect(query).not.toHaveBeenCalled();
            expect(stream).not.toHaveBeenCalled();
            const fromEngine = await engine.pathSteps([...new Set(frontier)], direction);
            expect(byEdge(fromMemory)).toEqual(byEdge(fromEngine));
            rows += fromMemory.length;
          }
        }
      } finally {
        query.mockRestore();
        stream.mockRestore();
      }
      expect(rows).toBeGreaterThan(10);
      expect(held()).toBe(1);
    });
  });

  /**
   * Every cluster list page and cluster parent of `vids` from both stores, the same and none read from
   * the memory's engine; how many items.
   */
  const sameClusterReads = async (
    memory: EmbeddedGraphStore,
    engine: EmbeddedGraphStore,
    vids: string[],
    cids: string[],
  ) => {
    const queries = pageQueries(50);
    let items = 0;
    // Cluster queries the memory's store sends to the engine (none once it holds clusters).
    const asked: string[] = [];
    await memory.getClusterParent('nobody'); // waits for the memory, read (and checked) through the engine
    const spy = jest.spyOn(ConnectionPool.prototype, 'query');
    const fromMemory = async <T>(read: () => Promise<T>) => {
      spy.mockClear();
      const result = await read();
      asked.push(...spy.mock.calls.map(([q]) => q.name).filter((name) => name.includes('cluster')));
      return result;
    };
    try {
      for (const vid of vids) {
        const parent = await fromMemory(() => memory.getClusterParent(vid));
        expect(parent).toEqual(await engine.getClusterParent(vid));
        for (const listed of new Set([vid, parent ?? vid]))
          for (const direction of ['suppliers', 'customers'] as const)
            for (const query of queries) {
              const page = await fromMemory(() =>
                memory.listRelationships(listed, direction, 'cluster', query),
              );
              expect(page).toEqual(await engine.listRelationships(listed, direction, 'cluster', query));
              items += page.items.length;
            }
      }
      for (const cid of cids)
        for (const page of [
          { limit: 50, offset: 0 },
          { limit: 1, offset: 0 },
          { limit: 2, offset: 1 },
          { limit: 10, offset: 10 },
        ]) {
          const members = await fromMemory(() => memory.listClusterMembers(cid, page));
          expect(members).toEqual(await engine.listClusterMembers(cid, page));
          items += members.items.length;
        }
    } finally {
      spy.mockRestore();
    }
    expect(asked).toEqual([]);
    return items;
  };

  it('answers every cluster list page, cluster parent and members page as the engine does, reading no cluster from it', async () => {
    await withBoth(async (memory, engine) => {
      const vids = [...SEED_VIDS, 'nobody'];
      const items = await sameClusterReads(memory, engine, vids, ['K1', ...vids]);
      expect(items).toBeGreaterThan(20);
      // K1's relationship to boeing stands for two, of two evidence types.
      const [k1] = (await memory.listRelationships('boeing', 'suppliers', 'cluster', queryAll)).items.filter(
        (i) => i.counterpart.vid === 'acme-hold',
      );
      expect(k1?.relationship.edge_ids).toEqual(['e3', 'e4']);
      expect(k1?.evidences.evidence_types).toEqual(['table', 'text']);
      const query = jest.spyOn(ConnectionPool.prototype, 'query');
      const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
      try {
        expect(await memory.getClusterParent('acme-jp')).toBe('acme-hold');
        const page = await memory.listRelationships('acme-hold', 'customers', 'cluster', queryAll);
        expect(page.items.map((i) => i.counterpart.vid)).toEqual(['boeing']);
        // The engine is asked only for the counterparts' summaries, which the store has no file for here.
        expect(query.mock.calls.map(([q]) => q.name)).toEqual(['company/get-summary']);
        expect(stream).not.toHaveBeenCalled();
      } finally {
        query.mockRestore();
        stream.mockRestore();
      }
      expect(held()).toBe(1);
    });
  });

  it('answers every cluster list and members page of the demo graph as the engine does', async () => {
    await withBoth(async (memory, engine) => {
      const demo = splitStatements(readSeed('demo.cypher'));
      await memory.runScript(demo);
      await engine.runScript(demo);
      const vids = [...readSeed('demo.cypher').matchAll(/CREATE \(:Company \{vid: '([^']+)'/g)].map(
        (m) => m[1]!,
      );
      const cids = [
        ...new Set([...readSeed('demo.cypher').matchAll(/cid_id: '([^']+)'/g)].map((m) => m[1]!)),
      ];
      expect(vids.length).toBeGreaterThan(30);
      expect(await sameClusterReads(memory, engine, vids, [...cids, ...vids])).toBeGreaterThan(200);
      expect(count('cluster lists read by the store')).toBe(0);
    }, false);
  });

  it('leaves cluster lists to the engine when its cluster relationships are not those of its relationships', async () => {
    const memory = await open('wait');
    try {
      // One cluster relationship the importer would derive is missing from the graph.
      await memory.runScript(["MATCH ()-[r:CLUSTER_SUPPLIES {relationship_id: 'mueller~K1'}]->() DELETE r"]);
      const page = await memory.listRelationships('mueller', 'customers', 'cluster', queryAll);
      expect(page.items).toEqual([]);
      expect(count('cluster lists read by the store')).toBe(1);
      // Plain lists still come from the memory, and hold the relationship.
      const plain = await memory.listRelationships('mueller', 'customers', 'company', queryAll);
      expect(plain.items.map((i) => i.counterpart.vid)).toEqual(['acme-gmbh']);
    } finally {
      await memory.close();
    }
  });

  it('reads a graph that stores single-company pairs too, as imports once did, as it reads a new one', async () => {
    const stored =
      "MATCH (s:Company {vid: 'delta'}), (c:Company {vid: 'bolt'}) CREATE (s)-[:CLUSTER_SUPPLIES {relationship_id: 'delta~bolt', edge_ids: '[e5]', confidence_score: 0.6, latest_edge_date: timestamp('2020-07-07T00:00:00Z'), evidence_types: '[text]'}]->(c)";
    await withBoth(async (memory, engine) => {
      await memory.runScript([stored]);
      await engine.runScript([stored]);
      for (const store of [memory, engine]) {
        const page = await store.listRelationships('delta', 'customers', 'cluster', queryAll);
        // The stored pair is the one the relationships sum up to, and is listed once.
        expect(page.items.map((i) => i.relationship.relationship_id)).toEqual(['delta~bolt', 'delta~boeing']);
      }
      expect(count('cluster lists read by the store')).toBe(0);
    });
  });

  it('sums up a pair of single-company clusters from the engine as the memory does', async () => {
    await withBoth(async (memory, engine) => {
      for (const [vid, direction] of [
        ['boeing', 'suppliers'],
        ['boeing', 'customers'],
        ['delta', 'customers'],
        ['bolt', 'suppliers'],
      ] as const) {
        for (const q of [
          queryAll,
          { ...queryAll, minConfidence: 0.55 },
          { ...queryAll, limit: 1, offset: 1 },
        ]) {
          const fromMemory = await memory.listRelationships(vid, direction, 'cluster', q);
          expect(await engine.listRelationships(vid, direction, 'cluster', q)).toEqual(fromMemory);
        }
      }
      const boeing = await engine.listRelationships('boeing', 'suppliers', 'cluster', queryAll);
      expect(boeing.items.map((i) => [i.relationship.relationship_id, i.relationship.edge_ids])).toEqual([
        ['bolt~boeing', ['e1']],
        ['K1~boeing', ['e3', 'e4']],
        ['delta~boeing', ['e2']],
      ]);
      expect(count('cluster lists read by the store')).toBe(0);
    });
  });

  it('orders members by name as the engine does, characters beyond U+FFFF included', async () => {
    await withBoth(async (memory, engine) => {
      const member = (vid: string, name: string, parent: boolean) =>
        `CREATE (:Company {vid: '${vid}', cid_id: 'K9', name: '${name}', domains: '[]', websites: '[]', is_cluster_parent: ${parent}, cluster_parent_vid: 'k9-b', cluster_size: 4, count_suppliers: 0, count_customers: 0, count_supplier_evidence: 0, count_customer_evidence: 0, identifiers: '[]', addresses: '[]'})`;
      // U+20000 sorts after U+FF21 by code point, before it by UTF-16 unit.
      const script = [
        member('k9-b', 'B Holdings', true),
        member('k9-wide', '\u{20000} Trading', false),
        member('k9-full', '\uFF21 Trading', false),
        member('k9-a', 'A Trading', false),
      ];
      await memory.runScript(script);
      await engine.runScript(script);
      const page = { limit: 10, offset: 0 };
      const fromEngine = await engine.listClusterMembers('K9', page);
      expect(fromEngine.items.map((m) => m.vid)).toEqual(['k9-b', 'k9-a', 'k9-full', 'k9-wide']);
      expect(await memory.listClusterMembers('K9', page)).toEqual(fromEngine);
      expect(await memory.getClusterParent('k9-wide')).toBe('k9-b');
    });
  });

  it('leaves members pages to the engine when a member names another cluster than its parent', async () => {
    const memory = await open('wait');
    try {
      await memory.runScript(["MATCH (c:Company {vid: 'acme-jp'}) SET c.cid_id = 'K2'"]);
      const page = { limit: 10, offset: 0 };
      const vids = async (cid: string) =>
        (await memory.listClusterMembers(cid, page)).items.map((m) => m.vid);
      expect(await vids('K1')).toEqual(['acme-hold', 'acme-gmbh']);
      expect(await vids('K2')).toEqual(['acme-jp']);
      // The memory still answers the lists: their parents are as they were.
      expect(await memory.getClusterParent('acme-jp')).toBe('acme-hold');
    } finally {
      await memory.close();
    }
  });

  it('reads the relationships anew after the data changes, so a walk never shows the old graph', async () => {
    const store = await open('wait');
    try {
      const before = (await walk(store)).map((r) => r.edge_id).sort();
      expect(before).toEqual(['e1', 'e2', 'e3', 'e4', 'e6']);
      expect(held()).toBe(1);
      await store.runScript([
        "MATCH (s:Company {vid: 'lonely'}), (c:Company {vid: 'mueller'}) CREATE (s)-[:SUPPLIES {edge_id: 'e-new', confidence_score: 0.7, status_code: 2, latest_edge_date: timestamp('2025-03-04T00:00:00Z')}]->(c)",
      ]);
      const after = await walk(store);
      expect(after.map((r) => r.edge_id).sort()).toEqual([...before, 'e-new'].sort());
      expect(held()).toBe(2);
      const added = after.find((r) => r.edge_id === 'e-new')!;
      expect(added).toMatchObject({
        confidence_score: 0.7,
        status_code: 2,
        latest_evidence_date: '2025-03-04',
        supplier: { vid: 'lonely', tier: 3 },
        customer: { vid: 'mueller', tier: 2 },
      });
    } finally {
      await store.close();
    }
  });

  const rowsOf = async (store: EmbeddedGraphStore) =>
    (await walk(store, { companyDetails: true })).map((r) => JSON.stringify(r)).sort();

  it('saves the memory beside the graph and loads it at the next start, for the same data only', async () => {
    const first = await open('wait');
    const expected = await rowsOf(first).finally(() => first.close());
    expect(expected.length).toBe(5);
    expect(held()).toBe(1);
    expect(count('walk memory saved')).toBe(1);
    logged = [];
    const second = await open('wait', false);
    try {
      expect(await rowsOf(second)).toEqual(expected);
      expect(count('held in memory for tier walks: loaded')).toBe(1);
      // A seed changes the data: what was saved is of the old graph, so it is read from the engine.
      await second.runScript([
        "MATCH (s:Company {vid: 'lonely'}), (c:Company {vid: 'mueller'}) CREATE (s)-[:SUPPLIES {edge_id: 'e-new', confidence_score: 0.7, latest_edge_date: timestamp('2025-03-04T00:00:00Z')}]->(c)",
      ]);
      expect((await walk(second)).map((r) => r.edge_id)).toContain('e-new');
      expect(count('held in memory for tier walks: loaded')).toBe(1);
      expect(held()).toBe(2);
    } finally {
      await second.close();
    }
    expect(count('walk memory saved')).toBe(1);
  });

  it('reads the relationships from the engine when the saved memory is cut short, and saves it again', async () => {
    const first = await open('wait');
    const expected = await rowsOf(first).finally(() => first.close());
    const graph = path.join(dir, 'graph');
    const saved = fs.readdirSync(graph).filter((f) => f.endsWith('.walk-memory'));
    expect(saved).toHaveLength(1);
    const file = path.join(graph, saved[0]!);
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
    logged = [];
    const second = await open('wait', false);
    try {
      expect(await rowsOf(second)).toEqual(expected);
      expect(count('held in memory for tier walks: loaded')).toBe(0);
      expect(held()).toBe(1);
    } finally {
      await second.close();
    }
    expect(count('walk memory saved')).toBe(1);
  });

  it('leaves walks to the engine when a value does not fit its columns, and says so', async () => {
    const store = await open('wait');
    try {
      await store.runScript(["MATCH ()-[r:SUPPLIES {edge_id: 'e3'}]->() SET r.status_code = 1099511627776"]);
      const rows = await walk(store);
      expect(rows.find((r) => r.edge_id === 'e3')!.status_code).toBe(2 ** 40);
      expect(held()).toBe(0);
      expect(logged.some((l) => l.includes('could not be held in memory') && l.includes('32 bits'))).toBe(
        true,
      );
    } finally {
      await store.close();
    }
  });

  it('lets other work run between batches of a long walk', async () => {
    const store = await open('wait');
    try {
      await store.runScript([
        "UNWIND range(1, 3000) AS i CREATE (:Company {vid: 'bulk-' + CAST(i AS STRING), name: 'Bulk', cid_id: 'bulk-' + CAST(i AS STRING), cluster_parent_vid: 'bulk-' + CAST(i AS STRING), cluster_size: 1})",
        "MATCH (s:Company), (c:Company {vid: 'boeing'}) WHERE s.vid STARTS WITH 'bulk-' CREATE (s)-[:SUPPLIES {edge_id: 'x' + s.vid, confidence_score: 0.5, latest_edge_date: timestamp('2024-01-01T00:00:00Z')}]->(c)",
      ]);
      let other = false;
      const seenBefore: boolean[] = [];
      await store.walkTiers(
        { root: 'boeing', direction: 'suppliers', tiers: 1, evidenceFrom: null, companyDetails: false },
        {
          // A sink that never waits: without turns of the event loop, nothing else would run until the end.
          companies: (b) => {
            if (b[0]?.tier === 0) setImmediate(() => (other = true));
          },
          relationships: () => void seenBefore.push(other),
        },
      );
      expect(held()).toBe(1);
      expect(seenBefore.length).toBeGreaterThan(2);
      expect(seenBefore.slice(0, -1)).toContain(true);
    } finally {
      await store.close();
    }
  });

  it("stops reading the engine's file of the relationships when the store closes, without a warning", async () => {
    const store = await open('wait');
    const { closed, blocksAfter } = await closeWhileExportRead(store, 'relationship-rows', () => walk(store));
    expect(closed).toBe(true);
    // The block at hand when the close began and at most one more; the file holds many more.
    expect(blocksAfter).toBeLessThanOrEqual(1);
    expect(logged.filter((l) => l.includes('"level":50') || l.includes('could not be held'))).toEqual([]);
    expect(fs.readdirSync(path.join(dir, 'graph')).filter((f) => f.includes('rows'))).toEqual([]);
  });

  it("drops the engine's file of the relationships, without a warning, when an import switches the data under its read", async () => {
    const store = await open('wait');
    // The switch holds before it counts as a change of the data (the new pool is in place, the
    // offsets of its companies not read yet), until the read of the old data's file has ended.
    let switching: () => void = () => undefined;
    const switched = new Promise<void>((resolve) => (switching = resolve));
    let readEnded: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (readEnded = resolve));
    const proto = Object.getPrototypeOf(store) as { loadVidOffsets: () => Promise<void> };
    const offsets = proto.loadVidOffsets;
    const held = jest.spyOn(proto, 'loadVidOffsets').mockImplementation(async function (this: unknown) {
      switching();
      await ended;
      return offsets.call(this);
    });
    const readBlocks = stagingFile.readStagingBlocks;
    let blocks = -1;
    const reads = jest
      .spyOn(stagingFile, 'readStagingBlocks')
      .mockImplementation(async (file, header, block, afterBlock) => {
        if (!path.basename(file).startsWith('relationship-rows'))
          return readBlocks(file, header, block, afterBlock);
        await switched;
        blocks = 0;
        try {
          return await readBlocks(file, header, (b, s, e) => (blocks++, block(b, s, e)), afterBlock, 64);
        } finally {
          readEnded();
        }
      });
    const input = writeImportDir(path.join(dir, 'input'), {
      companies: [companyRow({ vid: 'n1' }), companyRow({ vid: 'n2' })],
      relationships: [relationshipRow('n1', 'n2')],
    });
    try {
      await Promise.all([
        walk(store).catch(() => null),
        importDirectory(store, input, { workDir: dir, searchIndex: false }),
      ]);
    } finally {
      held.mockRestore();
      reads.mockRestore();
      await store.close();
    }
    // The read began once the switch held, and stopped at once.
    expect(blocks).toBeGreaterThanOrEqual(0);
    expect(blocks).toBeLessThanOrEqual(1);
    expect(logged.filter((l) => l.includes('"level":40') || l.includes('"level":50'))).toEqual([]);
  });

  it('reads in the background once prepared, and closes cleanly with a read under way', async () => {
    const store = await open('background');
    // Not prepared: a walk starts the read but does not wait for it.
    await walk(store);
    store.prepare();
    await store.close();
    expect(logged.filter((l) => l.includes('"level":50') || l.includes('could not be held'))).toEqual([]);
  });
});

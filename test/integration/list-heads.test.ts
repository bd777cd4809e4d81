import fs from 'node:fs';
import path from 'node:path';
import type { Direction } from '../../src/domain/model';
import { CompanySearchIndex } from '../../src/search/company-search';
import { ListHeads } from '../../src/services/list-heads';
import type { KnownCompanies } from '../../src/services/list-heads';
import { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { GraphStore, RelationshipQuery } from '../../src/store/graph-store';
import { tempDir } from '../support/paths';
import { turnsDuring } from '../support/turns';

/** A hub with 40 suppliers and 41 customers: confidences with many ties, some relationships undated. */
function hubGraph(seed: number): string[] {
  let x = seed;
  const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const company = (vid: string, suppliers: number, customers: number) =>
    `CREATE (:Company {vid: '${vid}', cid_id: '${vid}', name: 'Company ${vid}', domains: '[${vid}.example]', websites: '[]', domiciled_country: ${rand() < 0.8 ? "'Germany'" : 'NULL'}, is_cluster_parent: false, cluster_parent_vid: '${vid}', cluster_size: 1, count_suppliers: ${suppliers}, count_customers: ${customers}, count_supplier_evidence: ${suppliers}, count_customer_evidence: ${customers}, identifiers: '[]', addresses: '[]'})`;
  const out = [company('hub', 40, 41)];
  const relate = (from: string, to: string, id: string) => {
    const confidence = [0.2, 0.5, 0.5, 0.7, 0.9, 0.9, 1][Math.floor(rand() * 7)];
    const date =
      rand() < 0.25
        ? 'NULL'
        : `timestamp('20${10 + Math.floor(rand() * 15)}-0${1 + Math.floor(rand() * 9)}-15T00:00:00Z')`;
    const ends = `MATCH (a:Company {vid: '${from}'}), (b:Company {vid: '${to}'})`;
    // Every company is a cluster of its own: each pair's relationships are a cluster relationship
    // too, which reads sum up (the first pairs have two, as clusters of several companies can).
    for (const edge of id.endsWith('-0') ? [id, `${id}-twin`] : [id])
      out.push(
        `${ends} CREATE (a)-[:SUPPLIES {edge_id: '${edge}', confidence_score: ${confidence}, latest_edge_date: ${date}, status_code: 1, evidence_types: '[news]', hs_codes: '[]'}]->(b)`,
      );
  };
  for (let i = 0; i < 40; i++) {
    out.splice(1, 0, company(`s${i}`, 0, 1), company(`c${i}`, 1, 0));
    relate(`s${i}`, 'hub', `es${String(rand()).slice(2, 6)}-${i}`);
    relate('hub', `c${i}`, `ec${String(rand()).slice(2, 6)}-${i}`);
  }
  out.splice(1, 0, company('c40', 1, 0));
  relate('hub', 'c40', 'ec-extra');
  return out;
}

describe('heads of long relationship lists', () => {
  let dir: string;
  let store: EmbeddedGraphStore;
  let index: CompanySearchIndex | null = null;
  let heads: ListHeads;

  beforeAll(async () => {
    dir = tempDir('list-heads');
    store = new EmbeddedGraphStore({ dir: path.join(dir, 'graph'), connections: 2, bufferPoolMb: 256 });
    await store.open();
    await store.runScript(hubGraph(7));
    index = await CompanySearchIndex.build(store);
    // Lists of 30 or more keep their first 16 entries.
    heads = new ListHeads(store, () => index, undefined, { longList: 30, headEntries: 16, maxLists: 10 });
  });
  afterAll(async () => {
    await heads.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const fromStore = (
    direction: Direction,
    q: RelationshipQuery,
    grouping: 'company' | 'cluster' = 'company',
  ) => store.listRelationships('hub', direction, grouping, q, (v) => index!.summary(v));

  it('answers exactly as the store does, or leaves the page to the store', async () => {
    expect(
      heads.page('hub', 'suppliers', { minConfidence: 0, evidenceFrom: null, limit: 10, offset: 0 }, index),
    ).toBeNull();
    await heads.settled();
    let answered = 0;
    let declined = 0;
    const clusters = { answered: 0, declined: 0 };
    let twins = 0;
    for (const direction of ['suppliers', 'customers'] as const) {
      for (const minConfidence of [0, 0.5, 0.8, 0.95]) {
        for (const evidenceFrom of [
          null,
          new Date('2016-01-01T00:00:00Z'),
          new Date('2023-06-01T00:00:00Z'),
        ]) {
          for (const limit of [1, 3, 10]) {
            for (const offset of [0, 2, 5, 14]) {
              const q = { minConfidence, evidenceFrom, limit, offset };
              const cluster = heads.page('hub', direction, q, index, 'cluster');
              clusters[cluster === null ? 'declined' : 'answered']++;
              twins += cluster?.items.filter((i) => i.relationship.edge_ids.length === 2).length ?? 0;
              if (cluster) expect(cluster).toEqual(await fromStore(direction, q, 'cluster'));
              const kept = heads.page('hub', direction, q, index);
              if (kept === null) {
                declined++;
                continue;
              }
              answered++;
              expect(kept).toEqual(await fromStore(direction, q));
            }
          }
        }
      }
    }
    // Both kinds happen: pages inside the head, and pages the head cannot vouch for.
    expect(answered).toBeGreaterThan(40);
    expect(declined).toBeGreaterThan(40);
    // The hub's lists grouped by cluster are kept as well, and answer the same pages.
    expect(clusters).toEqual({ answered, declined });
    expect(twins).toBeGreaterThan(0);
    // Short lists keep no head.
    expect(
      heads.page('s1', 'customers', { minConfidence: 0, evidenceFrom: null, limit: 1, offset: 0 }, index),
    ).toBeNull();
  });

  it('asks the index nothing per entry while it builds, and leaves a page with a company it lacks to the store', async () => {
    const q = { minConfidence: 0, evidenceFrom: null, limit: 10, offset: 0 };
    const lacking = (await fromStore('suppliers', q)).items[4]!.counterpart.vid;
    let asked = 0;
    const known: KnownCompanies = {
      has: (v) => (asked++, v !== lacking && index!.has(v)),
      summary: (v) => (v === lacking ? null : index!.summary(v)),
      longLists: (min) => index!.longLists(min),
    };
    const built = new ListHeads(store, () => known, undefined, {
      longList: 30,
      headEntries: 16,
      maxLists: 10,
    });
    built.prepare();
    await built.settled();
    expect(asked).toBe(0);
    const before = { ...q, limit: 4 };
    expect(built.page('hub', 'suppliers', before, known)).toEqual(await fromStore('suppliers', before));
    expect(built.page('hub', 'suppliers', q, known)).toBeNull();
    expect(built.page('hub', 'suppliers', { ...q, offset: 5, limit: 3 }, known)).not.toBeNull();
    await built.close();
  });

  it('keeps only the longest lists when more qualify than it may keep', async () => {
    const q = { minConfidence: 0, evidenceFrom: null, limit: 1, offset: 0 };
    // Only the hub's lists qualify (40 suppliers, 41 customers); a cap of one keeps the longer.
    const one = new ListHeads(store, () => index, undefined, { longList: 30, headEntries: 16, maxLists: 1 });
    one.prepare();
    await one.settled();
    const kept = (['suppliers', 'customers'] as const).filter((d) => one.page('hub', d, q, index) !== null);
    expect(kept).toEqual(['customers']);
    await one.close();
  });

  it('keeps counterparts by vid but those of the first page, and gives requests a turn while it reads lists held in memory', async () => {
    const q = { minConfidence: 0, evidenceFrom: null, limit: 16, offset: 0 };
    const hub = await fromStore('suppliers', q);
    let reads = 0;
    // A store whose lists come from memory: each read takes the thread and waits for nothing.
    const inMemory: Pick<GraphStore, 'generation' | 'listRelationships' | 'getClusterParent'> = {
      generation: store.generation,
      getClusterParent: (vid) => Promise.resolve(vid),
      listRelationships: (_vid, _direction, _grouping, _query, counterparts) => {
        reads++;
        for (const until = performance.now() + 1; performance.now() < until;);
        const items = hub.items.map((item) => ({
          ...item,
          counterpart: counterparts!(item.counterpart.vid)!,
        }));
        return Promise.resolve({ items, hasMore: true });
      },
    };
    let summarized = 0;
    const known: KnownCompanies = {
      has: (v) => index!.has(v),
      summary: (v) => (summarized++, index!.summary(v)),
      longLists: () => ({
        suppliers: Array.from({ length: 40 }, (_, i) => ({ vid: `hub-${i}`, length: 40 })),
        customers: [],
      }),
    };
    const built = new ListHeads(inMemory as GraphStore, () => known, undefined, {
      longList: 30,
      headEntries: 16,
      maxLists: 100,
    });
    // Reads between two turns of the event loop, the most of any two.
    let readsAtTurn = 0;
    let mostBetweenTurns = 0;
    built.prepare();
    await turnsDuring(
      () => built.settled(),
      () => {
        mostBetweenTurns = Math.max(mostBetweenTurns, reads - readsAtTurn);
        readsAtTurn = reads;
      },
    );
    // Each list, and the same grouped by cluster.
    expect(reads).toBe(80);
    // A few milliseconds of lists between turns, however many lists there are: requests wait no
    // longer (6 reads of 1 ms here; with slices of 10 ms, 16).
    expect(mostBetweenTurns).toBeLessThanOrEqual(10);
    expect(mostBetweenTurns).toBeGreaterThan(0);
    // The first page's counterparts (the default page size) are made once, shared by every list that
    // has them (all 80 lists here are the same list); the rest are not made.
    expect(summarized).toBe(10);
    summarized = 0;
    // Served, the first page takes them as made; a later page takes its own from the known companies.
    const page = built.page('hub-7', 'suppliers', { ...q, limit: 10 }, known);
    expect(page).toEqual({ items: hub.items.slice(0, 10), hasMore: true });
    expect(summarized).toBe(0);
    // Shared by every request of the page: no request may change them.
    expect(Object.isFrozen(page!.items[0]!.counterpart)).toBe(true);
    expect(Object.isFrozen(page!.items[0]!.counterpart.domains)).toBe(true);
    expect(built.page('hub-7', 'suppliers', { ...q, limit: 10 }, known)!.items[3]!.counterpart).toBe(
      page!.items[3]!.counterpart,
    );
    const later = built.page('hub-7', 'suppliers', { ...q, limit: 5, offset: 8 }, known);
    expect(later).toEqual({ items: hub.items.slice(8, 13), hasMore: true });
    expect(summarized).toBe(3);
    await built.close();
  });

  it('stops answering when the data changes, and answers from the new data once rebuilt', async () => {
    const q = { minConfidence: 0, evidenceFrom: null, limit: 3, offset: 0 };
    expect(heads.page('hub', 'suppliers', q, index)).not.toBeNull();
    await store.runScript([
      "CREATE (:Company {vid: 'newcomer', cid_id: 'newcomer', name: 'Newcomer', domains: '[]', websites: '[]', is_cluster_parent: false, cluster_parent_vid: 'newcomer', cluster_size: 1, count_suppliers: 0, count_customers: 1, count_supplier_evidence: 0, count_customer_evidence: 1, identifiers: '[]', addresses: '[]'})",
      "MATCH (a:Company {vid: 'newcomer'}), (b:Company {vid: 'hub'}) CREATE (a)-[:SUPPLIES {edge_id: 'e-top', confidence_score: 1, latest_edge_date: NULL, status_code: 1, evidence_types: '[news]', hs_codes: '[]'}]->(b)",
    ]);
    // The index still describes the old data: neither it nor the heads may answer.
    index = null;
    expect(heads.page('hub', 'suppliers', q, index)).toBeNull();
    index = await CompanySearchIndex.build(store);
    expect(heads.page('hub', 'suppliers', q, index)).toBeNull();
    await heads.settled();
    const kept = heads.page('hub', 'suppliers', q, index);
    expect(kept?.items[0]?.counterpart.vid).toBe('newcomer');
    expect(kept).toEqual(await fromStore('suppliers', q));
  });
});

import type { SearchRow } from '../../src/domain/search-row';
import { CompanySearchIndex } from '../../src/search/company-search';
import type { TierCompany, TierRelationship } from '../../src/domain/tier-walk';
import type { GraphStore, TierWalkRequest } from '../../src/store/graph-store';
import { splitStatements } from '../../src/store/cypher-files';
import { readSeed } from '../support/paths';

/**
 * The behaviour every GraphStore adapter must share, against the hand-made
 * graph of seed/test-small.cypher. Each adapter's test file calls this with a
 * factory for an empty, opened store.
 */
export function graphStoreContract(
  engineName: string,
  openEmpty: () => Promise<GraphStore>,
  dispose: (store: GraphStore) => Promise<void>,
): void {
  describe(`GraphStore contract: ${engineName}`, () => {
    let store: GraphStore;
    const all = { minConfidence: 0, evidenceFrom: null, limit: 50, offset: 0 };

    beforeAll(async () => {
      store = await openEmpty();
      await store.runScript(splitStatements(readSeed('test-small.cypher')));
    });
    afterAll(async () => {
      await dispose(store);
    });

    it('counts the seeded graph', async () => {
      await expect(store.stats()).resolves.toEqual({ companies: 8, relationships: 8 });
    });

    it('returns a full profile with sorted identifiers and addresses', async () => {
      const p = await store.getCompany('boeing');
      expect(p).toMatchObject({
        vid: 'boeing',
        cid_id: 'boeing',
        name: 'Boeing Co',
        company_legal_name: 'The Boeing Company',
        domains: ['boeing.example'],
        websites: ['https://www.boeing.example/'],
        count_suppliers: 4,
        count_customers: 1,
        count_supplier_evidence: 6,
        count_customer_evidence: 1,
        domiciled_country: 'United States of America',
        incorporation_date: '1990-01-01T00:00:00.000Z',
        ipo_date: null,
        is_public: true,
        is_cluster_parent: false,
      });
      expect(p!.identifiers).toEqual([
        { type: 'LEI', value: 'RVDPPPGHCGZ40J4BQ305' },
        { type: 'Wikidata', value: 'Q66' },
      ]);
      expect(p!.addresses).toEqual([
        {
          address_line: '929 Long Bridge Drive',
          city: 'Arlington',
          region: 'Virginia',
          postal_code: '22202',
          country: 'United States of America',
          type: 'headquarters',
        },
      ]);
    });

    it('gives empty lists, not null, for a company without identifiers or addresses', async () => {
      const p = await store.getCompany('lonely');
      expect(p!.identifiers).toEqual([]);
      expect(p!.addresses).toEqual([]);
    });

    it('answers null for an unknown company and edge', async () => {
      await expect(store.getCompany('no-such-vid')).resolves.toBeNull();
      await expect(store.getEdge('no-such-edge')).resolves.toBeNull();
      await expect(store.companyExists('no-such-vid')).resolves.toBe(false);
      await expect(store.companyExists('boeing')).resolves.toBe(true);
    });

    it('returns companies in the order asked, leaving out unknown ones', async () => {
      const rows = await store.getCompanies(['mueller', 'nope', 'boeing']);
      expect(rows.map((r) => r.vid)).toEqual(['mueller', 'boeing']);
    });

    it('treats an empty vid list as no match instead of passing it to the engine', async () => {
      await expect(store.getCompanies([])).resolves.toEqual([]);
    });

    it('lists suppliers by confidence, with summaries and evidence types', async () => {
      const page = await store.listRelationships('boeing', 'suppliers', 'company', all);
      expect(page.hasMore).toBe(false);
      expect(page.items.map((i) => [i.counterpart.vid, i.relationship.confidence_score])).toEqual([
        ['bolt', 0.9],
        ['acme-gmbh', 0.8],
        ['acme-jp', 0.7],
        ['delta', 0.5],
      ]);
      expect(page.items[2]).toEqual({
        counterpart: {
          vid: 'acme-jp',
          name: 'Acme Aerospace Japan K.K.',
          company_legal_name: null,
          description: 'Acme Aerospace Japan K.K. makes things for the test graph.',
          domains: ['acmejp.example'],
          country: 'Japan',
          count_supplier_evidence: 0,
          count_customer_evidence: 3,
          count_customers: 2,
          count_suppliers: 0,
        },
        relationship: {
          confidence_score: 0.7,
          latest_relationship_date: '2022-05-05T00:00:00.000Z',
          relationship_type: 'edge',
          relationship_id: 'e4',
          edge_ids: ['e4'],
        },
        evidences: { evidence_types: ['table', 'text'] },
      });
    });

    it('lists customers', async () => {
      const page = await store.listRelationships('delta', 'customers', 'company', all);
      expect(page.items.map((i) => i.counterpart.vid)).toEqual(['bolt', 'boeing']);
    });

    it('filters by minimum confidence and evidence date', async () => {
      const conf = await store.listRelationships('boeing', 'suppliers', 'company', {
        ...all,
        minConfidence: 0.75,
      });
      expect(conf.items.map((i) => i.counterpart.vid)).toEqual(['bolt', 'acme-gmbh']);
      const dated = await store.listRelationships('boeing', 'suppliers', 'company', {
        ...all,
        evidenceFrom: new Date('2022-05-05T00:00:00Z'),
      });
      expect(dated.items.map((i) => i.counterpart.vid)).toEqual(['bolt', 'acme-gmbh', 'acme-jp']);
    });

    it('pages without overlap and says whether more exist', async () => {
      const first = await store.listRelationships('boeing', 'suppliers', 'company', { ...all, limit: 3 });
      const second = await store.listRelationships('boeing', 'suppliers', 'company', {
        ...all,
        limit: 3,
        offset: 3,
      });
      expect(first.hasMore).toBe(true);
      expect(second.hasMore).toBe(false);
      expect([...first.items, ...second.items].map((i) => i.relationship.relationship_id)).toEqual([
        'e1',
        'e3',
        'e4',
        'e2',
      ]);
    });

    it('groups cluster relationships under the counterpart cluster parent', async () => {
      const parent = await store.getClusterParent('acme-jp');
      expect(parent).toBe('acme-hold');
      const customers = await store.listRelationships(parent!, 'customers', 'cluster', all);
      expect(customers.items).toHaveLength(1);
      expect(customers.items[0]!.counterpart.vid).toBe('boeing');
      expect(customers.items[0]!.relationship).toEqual({
        confidence_score: 0.8,
        latest_relationship_date: '2024-01-10T00:00:00.000Z',
        relationship_type: 'cluster_edge',
        relationship_id: 'K1~boeing',
        edge_ids: ['e3', 'e4'],
      });
      const suppliers = await store.listRelationships(parent!, 'suppliers', 'cluster', all);
      expect(suppliers.items.map((i) => [i.counterpart.vid, i.relationship.edge_ids])).toEqual([
        ['mueller', ['e6']],
      ]);
    });

    it('sums up the cluster relationship of two single-company clusters from their own', async () => {
      // The import stores no cluster relationship between two single companies (bolt, delta, boeing).
      const relationship = (id: string, confidence: number, date: string, edgeIds: string[]) => ({
        confidence_score: confidence,
        latest_relationship_date: date,
        relationship_type: 'cluster_edge',
        relationship_id: id,
        edge_ids: edgeIds,
      });
      const suppliers = await store.listRelationships('boeing', 'suppliers', 'cluster', all);
      expect(suppliers.items.map((i) => [i.counterpart.vid, i.relationship, i.evidences])).toEqual([
        [
          'bolt',
          relationship('bolt~boeing', 0.9, '2023-06-15T00:00:00.000Z', ['e1']),
          { evidence_types: ['text'] },
        ],
        [
          'acme-hold',
          relationship('K1~boeing', 0.8, '2024-01-10T00:00:00.000Z', ['e3', 'e4']),
          { evidence_types: ['table', 'text'] },
        ],
        [
          'delta',
          relationship('delta~boeing', 0.5, '2016-02-01T00:00:00.000Z', ['e2']),
          { evidence_types: ['text'] },
        ],
      ]);
      // Filters and pages apply to the sums as to the stored relationships.
      const page = await store.listRelationships('boeing', 'suppliers', 'cluster', {
        minConfidence: 0.5,
        evidenceFrom: new Date('2020-01-01T00:00:00Z'),
        limit: 1,
        offset: 1,
      });
      expect(page.items.map((i) => i.relationship.relationship_id)).toEqual(['K1~boeing']);
      expect(page.hasMore).toBe(false);
      const customers = await store.listRelationships('delta', 'customers', 'cluster', { ...all, limit: 1 });
      expect(customers.items.map((i) => [i.counterpart.vid, i.relationship.relationship_id])).toEqual([
        ['bolt', 'delta~bolt'],
      ]);
      expect(customers.hasMore).toBe(true);
    });

    it('takes counterparts from the lookup it is given and reads only the ones it lacks', async () => {
      const plain = await store.listRelationships('boeing', 'suppliers', 'company', all);
      expect(plain.items.length).toBeGreaterThan(2);
      const lent = plain.items[0]!.counterpart.vid;
      const marker = { ...plain.items[0]!.counterpart, name: 'from the lookup' };
      const asked: string[] = [];
      const page = await store.listRelationships('boeing', 'suppliers', 'company', all, (vid) => {
        asked.push(vid);
        return vid === lent ? marker : null;
      });
      expect(asked.sort()).toEqual(plain.items.map((i) => i.counterpart.vid).sort());
      expect(page.items.map((i) => i.counterpart)).toEqual([
        marker,
        ...plain.items.slice(1).map((i) => i.counterpart),
      ]);
      expect(page.items.map((i) => i.relationship)).toEqual(plain.items.map((i) => i.relationship));
    });

    it('lists counterparts exactly as the search index built from it holds them', async () => {
      const index = await CompanySearchIndex.build(store);
      let compared = 0;
      for (const vid of ['boeing', 'delta', 'acme-hold', 'mueller']) {
        for (const direction of ['suppliers', 'customers'] as const) {
          for (const grouping of ['company', 'cluster'] as const) {
            const page = await store.listRelationships(vid, direction, grouping, all);
            for (const item of page.items) {
              expect(index.summary(item.counterpart.vid)).toEqual(item.counterpart);
              compared++;
            }
          }
        }
      }
      expect(compared).toBeGreaterThan(8);
      expect(index.summary('nope')).toBeNull();
      expect(index.has('boeing')).toBe(true);
      expect(index.has('nope')).toBe(false);
    });

    it('answers a company outside any cluster as its own cluster parent', async () => {
      await expect(store.getClusterParent('boeing')).resolves.toBe('boeing');
      await expect(store.getClusterParent('nope')).resolves.toBeNull();
    });

    it('lists the members of a cluster, the parent first, then by name, page by page', async () => {
      const first = await store.listClusterMembers('K1', { limit: 2, offset: 0 });
      expect(first).toEqual({
        items: [
          {
            vid: 'acme-hold',
            name: 'Acme Aerospace Holdings',
            country: 'United Kingdom of Great Britain and Northern Ireland',
            is_cluster_parent: true,
          },
          { vid: 'acme-gmbh', name: 'Acme Aerospace GmbH', country: 'Germany', is_cluster_parent: false },
        ],
        hasMore: true,
      });
      const second = await store.listClusterMembers('K1', { limit: 2, offset: 2 });
      expect(second.items.map((m) => m.vid)).toEqual(['acme-jp']);
      expect(second.hasMore).toBe(false);
      await expect(store.listClusterMembers('boeing', { limit: 10, offset: 0 })).resolves.toMatchObject({
        items: [{ vid: 'boeing', is_cluster_parent: false }],
      });
      await expect(store.listClusterMembers('nope', { limit: 10, offset: 0 })).resolves.toEqual({
        items: [],
        hasMore: false,
      });
    });

    it('returns an edge with its evidence, newest first', async () => {
      const e = await store.getEdge('e4');
      expect(e).toMatchObject({
        edge_id: 'e4',
        supplier_id: 'acme-jp',
        customer_id: 'boeing',
        label: 'supply',
        status_code: 1,
        confidence_score: 0.7,
        latest_edge_date: '2022-05-05T00:00:00.000Z',
        hs_codes: [],
      });
      expect(e!.evidences.map((v) => [v.id, v.date, v.type])).toEqual([
        ['ev5', '2022-05-05T00:00:00.000Z', 'text'],
        ['ev6', '2019-01-01T00:00:00.000Z', 'table'],
      ]);
      expect(e!.evidences[0]).toEqual({
        id: 'ev5',
        date: '2022-05-05T00:00:00.000Z',
        type: 'text',
        url: 'https://news.example/ev5',
        domain: 'news.example',
        status_id: 1,
        provided_by_customer: null,
        metadata: null,
        finalised_on: null,
        created_on: '2022-05-05T00:00:00.000Z',
        last_modified_on: '2022-05-05T00:00:00.000Z',
      });
    });

    it('streams search rows with the default-search flag, degree and search keys', async () => {
      const rows: SearchRow[] = [];
      await store.scanSearchRows((batch) => void rows.push(...batch));
      const byVid = new Map(rows.map((r) => [r.vid, r]));
      expect(rows).toHaveLength(8);
      expect(byVid.get('acme-hold')!.searchedByDefault).toBe(true);
      expect(byVid.get('acme-gmbh')!.searchedByDefault).toBe(false);
      expect(byVid.get('boeing')).toMatchObject({
        searchedByDefault: true,
        degree: 5,
        hosts: ['boeing.example'],
        cities: ['Arlington'],
        identifierValues: ['RVDPPPGHCGZ40J4BQ305', 'Q66'],
        aliases: ['BA', 'Boeing Commercial Airplanes'],
      });
      expect(byVid.get('bolt')!.aliases ?? []).toEqual([]);
      expect(byVid.get('lonely')).toMatchObject({ cities: [], identifierValues: [] });
    });

    it('reads one path-search step each way, with what expanding the company reached would read', async () => {
      const out = await store.pathSteps(['delta', 'nobody'], 'customers');
      expect(
        out
          .map((s) => ({ from: s.from, to: s.to, edge_id: s.edge_id, toDegree: s.toDegree }))
          .sort((a, b) => a.edge_id.localeCompare(b.edge_id)),
      ).toEqual([
        { from: 'delta', to: 'boeing', edge_id: 'e2', toDegree: 1 },
        { from: 'delta', to: 'bolt', edge_id: 'e5', toDegree: 1 },
      ]);
      expect(await store.pathSteps(['bolt'], 'suppliers')).toEqual([
        {
          from: 'bolt',
          to: 'delta',
          edge_id: 'e5',
          confidence_score: 0.6,
          latest_evidence_date: '2020-07-07T00:00:00.000Z',
          toDegree: 0,
        },
      ]);
      expect(await store.pathSteps([], 'suppliers')).toEqual([]);
      expect(await store.pathSteps(['nobody'], 'customers')).toEqual([]);
      // A long frontier may be read another way (one query for all); the rows are the same.
      const long = ['delta', ...Array.from({ length: 80 }, (_, i) => `nobody-${i}`), 'bolt'];
      const ids = async (vids: string[]) =>
        (await store.pathSteps(vids, 'customers'))
          .map((s) => `${s.from}>${s.to}:${s.edge_id}:${s.toDegree}`)
          .sort();
      expect(await ids(long)).toEqual(await ids(['delta', 'bolt']));
      expect(await ids(long)).toEqual(['bolt>boeing:e1:1', 'delta>boeing:e2:1', 'delta>bolt:e5:1']);
    });

    describe('tier walk', () => {
      /** The walk as a file of one table (names only) and of three (details): both must agree. */
      async function walk(request: TierWalkRequest) {
        const lean = await walkOnce({ ...request, companyDetails: false });
        const full = await walkOnce({ ...request, companyDetails: true });
        expect(lean).toEqual(full);
        return full;
      }

      async function walkOnce(request: TierWalkRequest) {
        const companies: Record<string, number> = {};
        const rows: string[] = [];
        const found = await store.walkTiers(request, {
          companies: (batch) => {
            for (const c of batch) companies[c.vid] = c.tier;
          },
          relationships: (tier, batch) => {
            for (const r of batch) {
              // Each row joins consecutive tiers, the nearer one being `tier`.
              const near = request.direction === 'suppliers' ? r.customer : r.supplier;
              const far = request.direction === 'suppliers' ? r.supplier : r.customer;
              expect([near.tier, far.tier]).toEqual([tier, tier + 1]);
              rows.push(`${r.edge_id}:${r.supplier.vid}>${r.customer.vid}`);
            }
          },
        });
        return { found, companies, rows: rows.sort() };
      }

      it('gives each supplier its shortest distance and only rows between consecutive tiers', async () => {
        // delta supplies both boeing (tier 1) and bolt (tier 1): e5 stays inside tier 1.
        // mueller supplies acme-gmbh; boeing supplies mueller back (a cycle to the root): not a row.
        const r = await walk({ root: 'boeing', direction: 'suppliers', tiers: 3, evidenceFrom: null });
        expect(r.found).toBe(true);
        expect(r.companies).toEqual({
          boeing: 0,
          bolt: 1,
          delta: 1,
          'acme-gmbh': 1,
          'acme-jp': 1,
          mueller: 2,
        });
        expect(r.rows).toEqual([
          'e1:bolt>boeing',
          'e2:delta>boeing',
          'e3:acme-gmbh>boeing',
          'e4:acme-jp>boeing',
          'e6:mueller>acme-gmbh',
        ]);
      });

      it('walks only relationships with evidence on or after the date, so a cut path makes a company farther', async () => {
        // e2 (2016) is cut: delta is now reached through bolt (e5, 2020-07-07), one tier farther.
        const r = await walk({
          root: 'boeing',
          direction: 'suppliers',
          tiers: 3,
          evidenceFrom: '2020-01-01',
        });
        expect(r.companies).toEqual({
          boeing: 0,
          bolt: 1,
          'acme-gmbh': 1,
          'acme-jp': 1,
          delta: 2,
          mueller: 2,
        });
        expect(r.rows).toEqual([
          'e1:bolt>boeing',
          'e3:acme-gmbh>boeing',
          'e4:acme-jp>boeing',
          'e5:delta>bolt',
          'e6:mueller>acme-gmbh',
        ]);
        const later = await walk({
          root: 'boeing',
          direction: 'suppliers',
          tiers: 3,
          evidenceFrom: '2024-06-01',
        });
        expect(later.companies).toEqual({ boeing: 0 });
        expect(later.rows).toEqual([]);
      });

      it('walks only relationships at or above min confidence', async () => {
        // e2 (0.5) is cut, so delta comes through bolt (e5, 0.6); e6 (0.4) is cut.
        const r = await walk({
          root: 'boeing',
          direction: 'suppliers',
          tiers: 3,
          evidenceFrom: null,
          minConfidence: 0.55,
        });
        expect(r.companies).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1, 'acme-jp': 1, delta: 2 });
        expect(r.rows).toEqual([
          'e1:bolt>boeing',
          'e3:acme-gmbh>boeing',
          'e4:acme-jp>boeing',
          'e5:delta>bolt',
        ]);
      });

      it('walks only into companies domiciled in the countries, whatever the stored spelling', async () => {
        // The seed stores names ('Germany', 'India'); bolt (Ireland) and acme-jp (Japan) are left out.
        const r = await walk({
          root: 'boeing',
          direction: 'suppliers',
          tiers: 3,
          evidenceFrom: null,
          countries: ['DE', 'IN'],
        });
        expect(r.companies).toEqual({ boeing: 0, delta: 1, 'acme-gmbh': 1, mueller: 2 });
        expect(r.rows).toEqual(['e2:delta>boeing', 'e3:acme-gmbh>boeing', 'e6:mueller>acme-gmbh']);
        const none = await walk({
          root: 'boeing',
          direction: 'suppliers',
          tiers: 3,
          evidenceFrom: null,
          countries: ['FR'],
        });
        expect(none).toEqual({ found: true, companies: { boeing: 0 }, rows: [] });
      });

      it.each([true, false])(
        'keeps per tier the companies of the strongest relationships and reports how many it left out (details: %s)',
        async (companyDetails) => {
          const dropped: Record<number, number> = {};
          const companies: Record<string, number> = {};
          const rows: string[] = [];
          await store.walkTiers(
            {
              root: 'boeing',
              direction: 'suppliers',
              tiers: 3,
              evidenceFrom: null,
              maxCompaniesPerTier: 2,
              companyDetails,
            },
            {
              companies: (b) => b.forEach((c) => (companies[c.vid] = c.tier)),
              relationships: (_t, b) => b.forEach((r) => rows.push(r.edge_id)),
              dropped: (tier, count) => void (dropped[tier] = count),
            },
          );
          // Tier 1 keeps bolt (0.9) and acme-gmbh (0.8) and leaves out acme-jp and delta, which are
          // not reached again farther away; tier 2 is mueller alone.
          expect(companies).toEqual({ boeing: 0, bolt: 1, 'acme-gmbh': 1, mueller: 2 });
          expect(rows.sort()).toEqual(['e1', 'e3', 'e6']);
          expect(dropped).toEqual({ 1: 2 });
        },
      );

      it('stops at the requested number of tiers', async () => {
        const r = await walk({ root: 'boeing', direction: 'suppliers', tiers: 1, evidenceFrom: null });
        expect(Object.keys(r.companies).sort()).toEqual(['acme-gmbh', 'acme-jp', 'boeing', 'bolt', 'delta']);
        expect(r.rows).toHaveLength(4);
      });

      it('walks towards customers, through the cycle, without revisiting the root', async () => {
        const r = await walk({ root: 'delta', direction: 'customers', tiers: 4, evidenceFrom: null });
        expect(r.companies).toEqual({ delta: 0, boeing: 1, bolt: 1, mueller: 2, 'acme-gmbh': 3 });
        expect(r.rows).toEqual([
          'e2:delta>boeing',
          'e5:delta>bolt',
          'e6:mueller>acme-gmbh',
          'e8:boeing>mueller',
        ]);
      });

      it.each([true, false])(
        'carries cluster ids and relationship fields on every row (details: %s)',
        async (companyDetails) => {
          const rows: TierRelationship[] = [];
          await store.walkTiers(
            { root: 'boeing', direction: 'suppliers', tiers: 1, evidenceFrom: null, companyDetails },
            { companies: () => undefined, relationships: (_t, b) => void rows.push(...b) },
          );
          const e3 = rows.find((r) => r.edge_id === 'e3')!;
          expect(e3.supplier).toMatchObject({ vid: 'acme-gmbh', cid_id: 'K1', tier: 1 });
          expect(e3.customer).toMatchObject({ vid: 'boeing', cid_id: 'boeing', tier: 0 });
          expect(e3.confidence_score).toBe(0.8);
          expect(e3.latest_evidence_date).toBe('2024-01-10');
          // The cluster relationship covering it: supplier cluster ~ customer cluster.
          expect(e3.cluster_edge_id).toBe('K1~boeing');
          expect(Array.isArray(e3.hs_codes)).toBe(true);
          expect(Array.isArray(e3.evidence_types)).toBe(true);
        },
      );

      it('walks the same without company details, keeping every name a row shows', async () => {
        const collect = async (companyDetails: boolean) => {
          const companies: TierCompany[] = [];
          const rows: TierRelationship[] = [];
          await store.walkTiers(
            { root: 'boeing', direction: 'suppliers', tiers: 3, evidenceFrom: null, companyDetails },
            { companies: (b) => void companies.push(...b), relationships: (_t, b) => void rows.push(...b) },
          );
          const named = (c: TierCompany) =>
            `${c.vid}:${c.tier}:${c.name}:${c.company_legal_name}:${c.cid_id}`;
          return {
            companies: companies.map(named).sort(),
            rows: rows
              .map((r) => `${r.edge_id}:${named(r.supplier)}>${named(r.customer)}:${r.confidence_score}`)
              .sort(),
            details: companies.find((c) => c.vid === 'acme-gmbh')!,
          };
        };
        const full = await collect(true);
        const lean = await collect(false);
        expect(lean.companies).toEqual(full.companies);
        expect(lean.rows).toEqual(full.rows);
        expect(full.rows).toHaveLength(5);
        // With details, the walk reads them; without, it may leave them out.
        expect(full.details.domiciled_country).not.toBeNull();
      });

      it('answers false for an unknown root and reports a company with no relationships alone', async () => {
        await expect(
          store.walkTiers(
            { root: 'no-such-vid', direction: 'suppliers', tiers: 2, evidenceFrom: null },
            { companies: () => undefined, relationships: () => undefined },
          ),
        ).resolves.toBe(false);
        const r = await walk({ root: 'lonely', direction: 'customers', tiers: 6, evidenceFrom: null });
        expect(r).toEqual({ found: true, companies: { lonely: 0 }, rows: [] });
      });
    });
  });

  // A graph of its own, after the seeded one is disposed: an adapter whose stores
  // share one database (Neo4j community edition) cannot hold both at once.
  describe(`GraphStore contract: ${engineName}, a graph of its own`, () => {
    it('keeps both rows of a diamond and drops a relationship back towards the root', async () => {
      // A and B (tier 1) both buy from D (tier 2); E sells to the root and to D.
      const diamond = await openEmpty();
      try {
        const company = (v: string) =>
          `CREATE (:Company {vid: '${v}', name: '${v.toUpperCase()}', cid_id: '${v}', cluster_parent_vid: '${v}', cluster_size: 1})`;
        const supplies = (id: string, s: string, c: string, day = '2024-01-01') =>
          `MATCH (s:Company {vid: '${s}'}), (c:Company {vid: '${c}'}) CREATE (s)-[:SUPPLIES {edge_id: '${id}', confidence_score: 0.5, latest_edge_date: timestamp('${day}T00:00:00Z')}]->(c)`;
        await diamond.runScript([
          ...['r', 'a', 'b', 'd', 'e'].map(company),
          supplies('x1', 'a', 'r'),
          supplies('x2', 'b', 'r'),
          supplies('x3', 'd', 'a'),
          // Older evidence: from 2020 on, d is still in tier 2 (through a) but x4 is no row.
          supplies('x4', 'd', 'b', '2019-12-31'),
          supplies('x5', 'e', 'd'),
          supplies('x6', 'e', 'r'),
        ]);
        for (const companyDetails of [true, false]) {
          const tiers: Record<string, number> = {};
          const rows: string[] = [];
          await diamond.walkTiers(
            { root: 'r', direction: 'suppliers', tiers: 3, evidenceFrom: null, companyDetails },
            {
              companies: (b) => b.forEach((c) => (tiers[c.vid] = c.tier)),
              relationships: (_t, b) => b.forEach((x) => rows.push(x.edge_id)),
            },
          );
          expect(tiers).toEqual({ r: 0, a: 1, b: 1, e: 1, d: 2 });
          expect(rows.sort()).toEqual(['x1', 'x2', 'x3', 'x4', 'x6']);
          const recent: string[] = [];
          await diamond.walkTiers(
            { root: 'r', direction: 'suppliers', tiers: 3, evidenceFrom: '2020-01-01', companyDetails },
            {
              companies: () => undefined,
              relationships: (_t, b) => b.forEach((x) => recent.push(x.edge_id)),
            },
          );
          expect(recent.sort()).toEqual(['x1', 'x2', 'x3', 'x6']);
        }
      } finally {
        await dispose(diamond);
      }
    });

    it('walks relationships without a date when no date is asked for, and leaves them out when one is', async () => {
      // f supplies the root and g supplies f, neither with a date: the import takes such rows.
      const graph = await openEmpty();
      try {
        const company = (v: string) =>
          `CREATE (:Company {vid: '${v}', name: '${v.toUpperCase()}', cid_id: '${v}', cluster_parent_vid: '${v}', cluster_size: 1})`;
        const supplies = (id: string, s: string, c: string, day: string | null) =>
          `MATCH (s:Company {vid: '${s}'}), (c:Company {vid: '${c}'}) CREATE (s)-[:SUPPLIES {edge_id: '${id}', confidence_score: 0.5${day === null ? '' : `, latest_edge_date: timestamp('${day}T00:00:00Z')`}}]->(c)`;
        await graph.runScript([
          ...['r', 'a', 'f', 'g'].map(company),
          supplies('y1', 'a', 'r', '2024-01-01'),
          supplies('y2', 'f', 'r', null),
          supplies('y3', 'g', 'f', null),
        ]);
        const walk = async (extra: Partial<TierWalkRequest>) => {
          const tiers: Record<string, number> = {};
          const rows: string[] = [];
          await graph.walkTiers(
            { root: 'r', direction: 'suppliers', tiers: 3, evidenceFrom: null, ...extra },
            {
              companies: (b) => b.forEach((c) => (tiers[c.vid] = c.tier)),
              relationships: (_t, b) => b.forEach((x) => rows.push(x.edge_id)),
            },
          );
          return { tiers, rows: rows.sort() };
        };
        // The native walk, the walk without details, and the step walk a filter brings.
        for (const extra of [{}, { companyDetails: false }, { minConfidence: 0.1 }]) {
          expect(await walk(extra)).toEqual({ tiers: { r: 0, a: 1, f: 1, g: 2 }, rows: ['y1', 'y2', 'y3'] });
          expect(await walk({ ...extra, evidenceFrom: '2020-01-01' })).toEqual({
            tiers: { r: 0, a: 1 },
            rows: ['y1'],
          });
        }
      } finally {
        await dispose(graph);
      }
    });
  });
}

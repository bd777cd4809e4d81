import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as stringHash from '../../src/store/string-hash';
import { PackedStrings } from '../../src/store/packed-strings';
import {
  WALK_SCAN_TURN,
  WalkMemory,
  WalkMemoryBuilder,
  unpackedVids,
  vidsDigest,
} from '../../src/store/walk-memory';
import { buildTierCompany } from '../support/factories';
import { tempDir } from '../support/paths';
import { turnsDuring } from '../support/turns';

/**
 * A hub `h` with `n` suppliers `s0`..`s<n-1>`, one relationship each. Confidences come in `steps`
 * steps (ten: many tie), the ids are not in the order of the suppliers, and every seventh
 * relationship has no confidence; every fifth has no date.
 */
function hub(n: number, steps = 10): WalkMemory {
  const vids = ['h', ...Array.from({ length: n }, (_, i) => `s${i}`)];
  const builder = new WalkMemoryBuilder(vids, n);
  builder.addCompanies(
    vids.map((vid, off) => ({
      off,
      name: vid.toUpperCase(),
      cid_id: vid,
      count_suppliers: off === 0 ? n : 0,
      count_customers: off === 0 ? 0 : 1,
    })),
  );
  builder.addRelationships(
    Array.from({ length: n }, (_, i) => ({
      s: i + 1,
      c: 0,
      edge_id: `e${(i * 7919) % 100_003}`,
      confidence_score: i % 7 === 3 ? null : ((i * 37) % steps) / steps,
      status_code: null,
      hs_codes: [],
      evidence_types: ['customs'],
      latest: i % 5 === 0 ? null : new Date(Date.UTC(2020, 0, 1 + (i % 900))),
    })),
  );
  return builder.finish();
}

/** The page as the engine's query orders it: every relationship that passes, sorted whole, then cut. */
function wholeSort(
  memory: WalkMemory,
  query: { minConfidence: number; evidenceFrom: Date | null; offset: number; count: number },
) {
  const every = memory.listRows('h', 'suppliers', { ...query, offset: 0, count: Number.MAX_SAFE_INTEGER });
  const sorted = [...every].sort(
    (a, b) =>
      (b.confidence_score as number) - (a.confidence_score as number) ||
      ((a.relationship_id as string) < (b.relationship_id as string) ? -1 : 1),
  );
  return sorted.slice(query.offset, query.offset + query.count);
}

describe('WalkMemory list pages', () => {
  const memory = hub(3_000);
  const queries = [
    { minConfidence: 0, evidenceFrom: null, offset: 0, count: 11 },
    { minConfidence: 0, evidenceFrom: null, offset: 100, count: 11 },
    { minConfidence: 0, evidenceFrom: null, offset: 2_500, count: 101 },
    { minConfidence: 0.5, evidenceFrom: null, offset: 7, count: 3 },
    { minConfidence: 0, evidenceFrom: new Date(Date.UTC(2021, 6, 1)), offset: 30, count: 11 },
    { minConfidence: 0.95, evidenceFrom: null, offset: 0, count: 11 },
    { minConfidence: 0, evidenceFrom: null, offset: 3_000, count: 11 },
    { minConfidence: 0, evidenceFrom: null, offset: 0, count: 0 },
  ];

  it('gives each page as ordering every relationship that passes would', () => {
    const lengths: number[] = [];
    for (const query of queries) {
      const page = memory.listRows('h', 'suppliers', query);
      expect(page).toEqual(wholeSort(memory, query));
      lengths.push(page.length);
    }
    // 2,571 relationships have a confidence: the third page is their last 71. Above every
    // confidence, past the end, and a page of none, there is nothing.
    expect(lengths).toEqual([11, 11, 71, 3, 11, 0, 0, 0]);
  });

  it('gives the same pages where few confidences tie', () => {
    const fine = hub(3_000, 997);
    for (const query of queries)
      expect(fine.listRows('h', 'suppliers', query)).toEqual(wholeSort(fine, query));
    expect(fine.listRows('h', 'suppliers', queries[1]!)).toHaveLength(11);
  });

  it('names only the relationships a page could show, not every one of a long list', () => {
    // Naming a relationship (its id, read from the packed ids) is most of a page's cost on a hub:
    // the ids are what ties are broken by, so only those as confident as the page's last are named.
    const named = jest.spyOn(memory as unknown as { edgeId(rel: number): string }, 'edgeId');
    try {
      memory.listRows('h', 'suppliers', { minConfidence: 0, evidenceFrom: null, offset: 0, count: 11 });
      // 3,000 relationships over ten confidences: the top one holds about 260 of them.
      expect(named.mock.calls.length).toBeLessThan(400);
      expect(named.mock.calls.length).toBeGreaterThanOrEqual(11);
    } finally {
      named.mockRestore();
    }
  });
});

describe('WalkMemory cluster list pages', () => {
  // Cluster `p` (five members) buys from 60 clusters `q<k>` of three members each; every member of
  // `q<k>` supplies `p` and one other member of `p`'s cluster: six relationships a cluster pair.
  const clusters = 60;
  const pMembers = ['p', 'p1', 'p2', 'p3', 'p4'];
  const qMembers = (k: number) => [`q${k}`, `q${k}a`, `q${k}b`];
  const vids = [...pMembers, ...Array.from({ length: clusters }, (_, k) => qMembers(k)).flat()];
  const off = new Map(vids.map((v, i) => [v, i]));
  const parentOf = (vid: string) => (vid.startsWith('p') ? 'p' : vid.replace(/[ab]$/, ''));
  const edges: { s: number; c: number; edge_id: string; confidence: number }[] = [];
  for (let k = 0; k < clusters; k++)
    for (const [j, q] of qMembers(k).entries())
      for (const customer of ['p', `p${(k % 4) + 1}`])
        edges.push({
          s: off.get(q)!,
          c: off.get(customer)!,
          edge_id: `e${k}-${j}-${customer}`,
          confidence: k / 100,
        });

  function clustered(): WalkMemory {
    const builder = new WalkMemoryBuilder(vids, edges.length);
    builder.addCompanies(
      vids.map((vid, o) => ({
        off: o,
        name: vid.toUpperCase(),
        cid_id: `K-${parentOf(vid)}`,
        cluster_parent_vid: parentOf(vid),
        is_cluster_parent: parentOf(vid) === vid,
        count_suppliers: edges.filter((e) => e.c === o).length,
        count_customers: edges.filter((e) => e.s === o).length,
      })),
    );
    builder.addRelationships(
      edges.map((e) => ({
        s: e.s,
        c: e.c,
        edge_id: e.edge_id,
        confidence_score: e.confidence,
        status_code: null,
        hs_codes: [],
        evidence_types: ['customs'],
        latest: null,
      })),
    );
    return builder.finish();
  }

  it('names every relationship of each row, going over the cluster once for a whole page', () => {
    const memory = clustered();
    const towards = jest.spyOn(memory as unknown as { towards(direction: string): unknown }, 'towards');
    let rows: ReturnType<WalkMemory['clusterRows']>;
    try {
      rows = memory.clusterRows('p', 'suppliers', {
        minConfidence: 0,
        evidenceFrom: null,
        offset: 0,
        count: 50,
      });
      // Once to sum the groups up, once to name the relationships of the page's rows.
      expect(towards.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      towards.mockRestore();
    }
    expect(rows).toHaveLength(50);
    for (const [i, row] of rows!.entries()) {
      const k = clusters - 1 - i; // the most confident first
      expect(row.relationship_id).toBe(`K-q${k}~K-p`);
      const expected = edges.filter((e) => e.edge_id.startsWith(`e${k}-`)).map((e) => e.edge_id);
      expect(row.edge_ids).toEqual([...expected].sort());
      expect(expected).toHaveLength(6);
    }
  });
});

describe('a saved walk memory', () => {
  const dir = tempDir('walk-memory-save');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const n = 400;
  const vids = ['h', ...Array.from({ length: n }, (_, i) => `s${i}`)];
  const query = { minConfidence: 0, evidenceFrom: null, offset: 0, count: 1_000 };

  async function saved(name: string): Promise<{ memory: WalkMemory; file: string }> {
    const memory = hub(n);
    const file = path.join(dir, name);
    await memory.save(file, 'k');
    return { memory, file };
  }

  it('loads its lookup tables with its columns instead of building them again', async () => {
    const { memory, file } = await saved('whole');
    const hashed = jest.spyOn(stringHash, 'fnv1a');
    let loaded: WalkMemory | null;
    try {
      loaded = await WalkMemory.load(file, 'k', vids);
      expect(hashed).not.toHaveBeenCalled();
    } finally {
      hashed.mockRestore();
    }
    expect(loaded).not.toBeNull();
    expect(loaded!.listRows('h', 'suppliers', query)).toEqual(memory.listRows('h', 'suppliers', query));
    for (const vid of ['s0', 's7', `s${n - 1}`]) {
      const page = loaded!.listRows(vid, 'customers', query);
      expect(page).toHaveLength(1);
      expect(page).toEqual(memory.listRows(vid, 'customers', query));
    }
  });

  /** The file with the u32 at `index` of its section `fromEnd` places before the last (0: the last) set to `value`. */
  function damage(file: string, fromEnd: number, index: number, value: number): void {
    const bytes = fs.readFileSync(file);
    const length = bytes.readUInt32LE(8);
    const header = JSON.parse(bytes.toString('utf8', 12, 12 + length)) as {
      sections: { at: number; bytes: number }[];
    };
    const base = Math.ceil((12 + length) / 8) * 8;
    const section = header.sections[header.sections.length - 1 - fromEnd]!;
    bytes.writeUInt32LE(value, base + section.at + 4 * index);
    fs.writeFileSync(file, bytes);
  }

  it('checks the vids it is loaded for without holding the event loop for all of them at once', async () => {
    // A server loads the memory while it answers requests: the digest of a million vids takes
    // 0.1-0.2 s, so it must let the event loop turn as it goes, and still give what it gave before
    // (files saved by earlier builds keep loading).
    const many = Array.from({ length: 230_000 }, (_, i) => `c${i.toString(36)}`);
    const { result: digest, turns } = await turnsDuring(() => vidsDigest(many));
    expect(digest).toBe(
      createHash('sha256')
        .update(many.join('\n') + '\n')
        .digest('hex'),
    );
    expect(turns).toBeGreaterThanOrEqual(4);
    expect(await vidsDigest([])).toBe(createHash('sha256').digest('hex'));
  });

  it('unpacks the vids a file holds (a Neo4j store has no offsets of its own) letting the event loop turn', async () => {
    const many = Array.from({ length: 230_000 }, (_, i) => `c${(i * 7_919).toString(36)}`);
    const { result, turns } = await turnsDuring(() => unpackedVids(PackedStrings.from(many)));
    expect(result).toEqual(many);
    expect(turns).toBeGreaterThanOrEqual(4);
    expect(await unpackedVids(PackedStrings.from([]))).toEqual([]);

    const memory = hub(n);
    const file = path.join(dir, 'with-vids');
    await memory.save(file, 'k', { withVids: true });
    const loaded = await WalkMemory.load(file, 'k', null);
    expect(loaded).not.toBeNull();
    expect(loaded!.listRows('h', 'suppliers', query)).toEqual(memory.listRows('h', 'suppliers', query));
    expect(loaded!.listRows('s7', 'customers', query)).toEqual(memory.listRows('s7', 'customers', query));
    // Held vids of other companies than the file's columns were made for: not read.
    expect(await WalkMemory.load(file, 'k', [...vids].reverse())).toBeNull();
  });

  it('is not read when a lookup table cannot be that of its columns', async () => {
    const { file: slots } = await saved('slots');
    damage(slots, 0, 3, n + 5); // a vid's offset past the last company
    expect(await WalkMemory.load(slots, 'k', vids)).toBeNull();
    const { file: rels } = await saved('rels');
    damage(rels, 1, 0, n + 1); // a relationship past the last one
    expect(await WalkMemory.load(rels, 'k', vids)).toBeNull();
    const { file: bounds } = await saved('bounds');
    damage(bounds, 2, 1, n); // a company's relationships ending before they begin
    expect(await WalkMemory.load(bounds, 'k', vids)).toBeNull();
    const { file: intact } = await saved('intact');
    expect(await WalkMemory.load(intact, 'k', vids)).not.toBeNull();
  });
});

describe('a walk over a large tier', () => {
  it('lets the event loop turn while it finds the tiers, and writes the rows it would have', async () => {
    const n = 5 * WALK_SCAN_TURN;
    const memory = hub(n);
    const root = buildTierCompany({ vid: 'h', tier: 0, name: 'H', count_suppliers: n });
    let turnsBeforeCompanies: number | null = null;
    let turnsSoFar = 0;
    const rows: string[] = [];
    const { turns } = await turnsDuring(
      () =>
        memory.walk(
          {
            root,
            rootOffset: memory.offsetOf('h'),
            direction: 'suppliers',
            tiers: 2,
            evidenceFrom: null,
            companyDetails: false,
          },
          {
            companies: () => void (turnsBeforeCompanies ??= turnsSoFar),
            relationships: (tier, batch) => {
              for (const r of batch) rows.push(`${tier}:${r.supplier.vid}>${r.customer.vid}`);
            },
          },
        ),
      () => turnsSoFar++,
    );
    // Finding the tier looks at n relationships: it gives way at least every WALK_SCAN_TURN of them.
    expect(turnsBeforeCompanies).toBeGreaterThanOrEqual(4);
    expect(turns).toBeGreaterThan(turnsBeforeCompanies!);
    expect(rows).toHaveLength(n);
    expect(new Set(rows).size).toBe(n);
    expect(rows.every((r) => r.startsWith('0:s') && r.endsWith('>h'))).toBe(true);
  });

  it('stops when cancelled while a per-tier cap makes it look for the rows again', async () => {
    const n = 5 * WALK_SCAN_TURN;
    const memory = hub(n);
    const root = buildTierCompany({ vid: 'h', tier: 0, name: 'H', count_suppliers: n });
    const cancel = new AbortController();
    let turnsSoFar = 0;
    let companiesReported = 0;
    const walked = turnsDuring(
      () =>
        memory.walk(
          {
            root,
            rootOffset: memory.offsetOf('h'),
            direction: 'suppliers',
            tiers: 1,
            evidenceFrom: null,
            companyDetails: false,
            // A cap no tier reaches: nothing is left out, but the rows are found in a second scan.
            maxCompaniesPerTier: n,
          },
          { companies: () => void companiesReported++, relationships: () => undefined },
          cancel.signal,
        ),
      // Finding the tier gives way five times; the cancel comes during the second scan's turns.
      () => {
        if (++turnsSoFar === 7) cancel.abort(new Error('cancelled'));
      },
    );
    await expect(walked).rejects.toThrow('cancelled');
    expect(turnsSoFar).toBeGreaterThanOrEqual(7);
    expect(companiesReported).toBe(0);
  });
});

import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCsvText } from '../../src/import/csv';
import { generateDataset } from '../../src/demo/generate';
import { stageImport } from '../../src/import/stage';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tg-gen-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function digests(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of ['companies', 'clusters', 'identifiers', 'addresses', 'relationships', 'evidence']) {
    out[f] = createHash('sha256')
      .update(await readFile(join(dir, `${f}.csv`)))
      .digest('hex');
  }
  return out;
}

/** Data rows of an input file as objects keyed by its header. */
async function rows(dir: string, file: string): Promise<Record<string, string>[]> {
  const records: string[][] = [];
  parseCsvText(await readFile(join(dir, file), 'utf8'), {
    row: (f) => records.push(f),
    error: (line, reason) => {
      throw new Error(`${file} line ${line}: ${reason}`);
    },
  });
  const [head, ...data] = records;
  return data.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? ''])));
}

describe('generateDataset', () => {
  it('is deterministic: same seed, same bytes; other seed, other bytes', async () => {
    const a = join(work, 'a');
    const b = join(work, 'b');
    const c = join(work, 'c');
    const ra = await generateDataset({ companies: 200, seed: 11, outDir: a });
    await generateDataset({ companies: 200, seed: 11, outDir: b });
    await generateDataset({ companies: 200, seed: 12, outDir: c });
    const [da, db, dc] = await Promise.all([digests(a), digests(b), digests(c)]);
    expect(db).toEqual(da);
    for (const f of Object.keys(da)) expect(dc[f]).not.toBe(da[f]);
    expect(ra.files.map((f) => f.slice(a.length + 1)).sort()).toEqual([
      'addresses.csv',
      'clusters.csv',
      'companies.csv',
      'evidence.csv',
      'identifiers.csv',
      'relationships.csv',
    ]);
    expect(ra.counts.companies).toBe(200);
  });

  describe('a 2,000-company dataset', () => {
    const dir = (): string => join(work, 'stats');
    let counts: Record<string, number>;
    let companies: Record<string, string>[];
    let edges: Record<string, string>[];
    let evidence: Record<string, string>[];
    beforeAll(async () => {
      counts = (await generateDataset({ companies: 2000, seed: 3, outDir: dir() })).counts;
      companies = await rows(dir(), 'companies.csv');
      edges = await rows(dir(), 'relationships.csv');
      evidence = await rows(dir(), 'evidence.csv');
    });

    it('has URL-path-safe, unique ids', () => {
      const safe = /^[a-z0-9]+$/;
      for (const list of [
        companies.map((c) => c.vid!),
        edges.map((e) => e.edge_id!),
        evidence.map((e) => e.id!),
      ]) {
        expect(list.every((id) => safe.test(id))).toBe(true);
        expect(new Set(list).size).toBe(list.length);
      }
      expect(companies).toHaveLength(2000);
      expect(counts.relationships).toBe(edges.length);
      expect(counts.evidence).toBe(evidence.length);
    });

    it('puts about 10% of companies into clusters of 2 to 20 with one parent each', async () => {
      const members = await rows(dir(), 'clusters.csv');
      expect(members.length).toBeGreaterThan(2000 * 0.05);
      expect(members.length).toBeLessThan(2000 * 0.16);
      const byCluster = new Map<string, Record<string, string>[]>();
      for (const m of members) byCluster.set(m.cid_id!, [...(byCluster.get(m.cid_id!) ?? []), m]);
      for (const list of byCluster.values()) {
        expect(list.length).toBeGreaterThanOrEqual(2);
        expect(list.length).toBeLessThanOrEqual(20);
        expect(list.filter((m) => m.is_parent === 'true')).toHaveLength(1);
      }
    });

    it('has about 5 relationships per company with heavy-tailed degrees', () => {
      const perCompany = edges.length / 2000;
      expect(perCompany).toBeGreaterThan(3.5);
      expect(perCompany).toBeLessThan(7);
      const inDeg = new Map<string, number>();
      const outDeg = new Map<string, number>();
      for (const e of edges) {
        inDeg.set(e.customer_id!, (inDeg.get(e.customer_id!) ?? 0) + 1);
        outDeg.set(e.supplier_id!, (outDeg.get(e.supplier_id!) ?? 0) + 1);
      }
      const maxIn = Math.max(...inDeg.values());
      const maxOut = Math.max(...outDeg.values());
      expect(maxIn).toBeGreaterThan(10 * perCompany);
      expect(maxOut).toBeGreaterThan(10 * perCompany);
      expect(edges.every((e) => e.supplier_id !== e.customer_id)).toBe(true);
      const pairs = new Set(edges.map((e) => `${e.supplier_id}>${e.customer_id}`));
      expect(pairs.size).toBe(edges.length);
    });

    it('contains cycles and diamonds', () => {
      const out = new Map<string, Set<string>>();
      for (const e of edges) {
        if (!out.has(e.supplier_id!)) out.set(e.supplier_id!, new Set());
        out.get(e.supplier_id!)!.add(e.customer_id!);
      }
      const twoCycles = edges.filter((e) => out.get(e.customer_id!)?.has(e.supplier_id!) === true).length;
      const threeCycle = edges.some((e) =>
        [...(out.get(e.customer_id!) ?? [])].some((x) => out.get(x)?.has(e.supplier_id!) === true),
      );
      expect(twoCycles + (threeCycle ? 1 : 0)).toBeGreaterThan(0);
      // Diamond: a -> b -> d and a -> c -> d with b != c.
      let diamond = false;
      for (const [a, next] of out) {
        const reach = new Map<string, string>();
        for (const b of next) {
          for (const d of out.get(b) ?? []) {
            const via = reach.get(d);
            if (via !== undefined && via !== b && d !== a) diamond = true;
            reach.set(d, b);
          }
        }
        if (diamond) break;
      }
      expect(diamond).toBe(true);
    });

    it('has 1 to 5 evidence items per edge, about 2 on average, mostly text', () => {
      const perEdge = new Map<string, number>();
      for (const v of evidence) perEdge.set(v.edge_id!, (perEdge.get(v.edge_id!) ?? 0) + 1);
      expect(perEdge.size).toBe(edges.length);
      const n = [...perEdge.values()];
      expect(Math.min(...n)).toBe(1);
      expect(Math.max(...n)).toBe(5);
      const mean = evidence.length / edges.length;
      expect(mean).toBeGreaterThan(1.7);
      expect(mean).toBeLessThan(2.4);
      expect(n.filter((k) => k === 1).length).toBeGreaterThan(n.filter((k) => k === 3).length);
      expect(evidence.filter((v) => v.type === 'text').length / evidence.length).toBeGreaterThan(0.8);
    });

    it('keeps confidences in (0, 1] and evidence dates within 2015 to 2026', () => {
      for (const e of edges) {
        const c = Number(e.confidence_score);
        expect(c > 0 && c <= 1).toBe(true);
      }
      const lo = Date.UTC(2015, 0, 1);
      const hi = Date.UTC(2027, 0, 1);
      for (const v of evidence) {
        for (const d of [v.date!, v.created_on!, v.last_modified_on!, v.finalised_on!]) {
          if (d === '') continue;
          const t = Date.parse(d.length === 10 ? `${d}T00:00:00Z` : d);
          expect(t >= lo && t < hi).toBe(true);
        }
      }
      expect(edges.some((e) => e.hs_codes !== '')).toBe(true);
    });

    it('writes realistic companies', () => {
      const countries = new Map<string, number>();
      for (const c of companies)
        countries.set(c.domiciled_country!, (countries.get(c.domiciled_country!) ?? 0) + 1);
      const top = [...countries.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      expect(['China', 'United States of America']).toContain(top);
      expect(countries.size).toBeGreaterThan(20);
      expect(companies.filter((c) => c.domains !== '').length / 2000).toBeGreaterThan(0.7);
      expect(companies.some((c) => /GmbH|Co\., Ltd\.|Inc\.|S\.A\./.test(c.name!))).toBe(true);
    });

    it('stages with zero rejections', async () => {
      const r = await stageImport(dir(), join(work, 'stats-staging'), { maxRejected: 0 });
      expect(r.rejected).toEqual([]);
      expect(r.counts.Company).toBe(2000);
      expect(r.counts.Edge).toBe(counts.relationships);
      expect(r.items).toEqual({
        evidence: counts.evidence,
        identifiers: counts.identifiers,
        addresses: counts.addresses,
      });
      expect(r.counts.CLUSTER_SUPPLIES).toBeGreaterThan(0);
      expect(r.counts.CLUSTER_SUPPLIES).toBeLessThanOrEqual(r.counts.Edge);
    });
  });

  it('refuses impossible sizes', async () => {
    await expect(generateDataset({ companies: 1, seed: 1, outDir: join(work, 'x') })).rejects.toThrow(
      RangeError,
    );
    await expect(generateDataset({ companies: 2.5, seed: 1, outDir: join(work, 'x') })).rejects.toThrow(
      RangeError,
    );
  });
});

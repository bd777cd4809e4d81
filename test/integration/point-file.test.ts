import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConnectionPool } from '../../src/store/embedded/connection-pool';
import type { EmbeddedGraphStore } from '../../src/store/embedded/embedded.store';
import type { EmbeddedStoreOptions } from '../../src/store/embedded/embedded.store';
import { pointFileCounts } from '../../src/store/point-file';
import { tempDir } from '../support/paths';
import { closeWhileExportRead, refuseEngineExports } from '../support/engine-exports';
import { openSeededStore } from '../support/seeded-store';

const VIDS = ['acme-gmbh', 'acme-hold', 'acme-jp', 'boeing', 'bolt', 'delta', 'lonely', 'mueller', 'nobody'];
const EDGES = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e-none'];

/** Point reads (profiles, edges, list counterparts) from the file the embedded store writes beside its graph. */
describe('embedded store: point reads from a file', () => {
  let dir: string;
  let logged: string[];
  beforeEach(() => {
    dir = tempDir('point-file');
    logged = [];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** `seed` false: reopen the graph as it is (the seed counts as a change of the data). */
  const open = (pointFile: EmbeddedStoreOptions['pointFile'], seed = true, pointFileEdges = true) =>
    openSeededStore(dir, logged, { pointFile, pointFileEdges }, seed);
  const count = (text: string) => logged.filter((l) => l.includes(text)).length;
  const files = () => fs.readdirSync(path.join(dir, 'graph')).filter((f) => f.endsWith('.point-reads'));
  const answers = async (store: EmbeddedGraphStore) => ({
    profiles: await Promise.all(VIDS.map((v) => store.getCompany(v))),
    cores: await store.getCompanies(VIDS),
    edges: await Promise.all(EDGES.map((e) => store.getEdge(e))),
    lists: await Promise.all(
      VIDS.flatMap((v) =>
        (['suppliers', 'customers'] as const).map((d) =>
          store.listRelationships(v, d, 'company', {
            minConfidence: 0,
            evidenceFrom: null,
            limit: 10,
            offset: 0,
          }),
        ),
      ),
    ),
  });

  it('answers profiles, edges and list counterparts as the engine does', async () => {
    // Profiles and edges both come through files the engine writes in one scan, not range by range.
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    let fromFile: EmbeddedGraphStore;
    try {
      fromFile = await open('wait');
      await fromFile.getCompany(VIDS[0]!);
      const ranged = stream.mock.calls
        .map(([q]) => q.name)
        .filter((n) => n.endsWith('-range') || n === 'edge/range');
      expect(ranged).toEqual([]);
      expect(fs.readdirSync(path.join(dir, 'graph')).filter((f) => /^(profile|edge)-rows/.test(f))).toEqual(
        [],
      );
    } finally {
      stream.mockRestore();
    }
    const engineDir = dir;
    dir = tempDir('point-engine');
    const engine = await open('off');
    try {
      const got = await answers(fromFile);
      expect(got).toEqual(await answers(engine));
      expect(got.profiles.filter((p) => p !== null)).toHaveLength(8);
      expect(got.edges.filter((e) => e !== null)).toHaveLength(8);
      expect(count('point-read file written')).toBe(1);
    } finally {
      await fromFile.close();
      await engine.close();
      fs.rmSync(engineDir, { recursive: true, force: true });
    }
  });

  it('reads the profiles and edges range by range, with a warning, when the engine cannot write them to a file', async () => {
    // Written through a file the engine writes in one scan; range by range only when it cannot.
    const refused = refuseEngineExports('IO exception: No space left on device');
    const stream = jest.spyOn(ConnectionPool.prototype, 'stream');
    const fromFile = await open('wait');
    let got: Awaited<ReturnType<typeof answers>>;
    let ranged: number;
    let rangedEdges: number;
    try {
      got = await answers(fromFile);
      ranged = stream.mock.calls.filter(([q]) => q.name === 'company/profiles-range').length;
      rangedEdges = stream.mock.calls.filter(([q]) => q.name === 'edge/range').length;
    } finally {
      refused.mockRestore();
      stream.mockRestore();
      await fromFile.close();
    }
    const fileDir = dir;
    dir = tempDir('point-engine');
    const engine = await open('off');
    try {
      expect(got).toEqual(await answers(engine));
      expect(ranged).toBeGreaterThan(0);
      expect(rangedEdges).toBeGreaterThan(0);
      expect(count('profiles for the point-read file read range by range')).toBe(1);
      expect(count('edges for the point-read file read range by range')).toBe(1);
      expect(count('point-read file written')).toBe(1);
      expect(
        fs.readdirSync(path.join(fileDir, 'graph')).filter((f) => /^(profile|edge)-rows/.test(f)),
      ).toEqual([]);
    } finally {
      await engine.close();
      fs.rmSync(fileDir, { recursive: true, force: true });
    }
  });

  it.each([
    ['profiles', 'profile-rows'],
    ['edges', 'edge-rows'],
  ])(
    "stops reading the engine's file of the %s when the store closes, without a warning",
    async (_what, prefix) => {
      const store = await open('wait');
      const { closed, blocksAfter } = await closeWhileExportRead(store, prefix, () =>
        store.getCompany(VIDS[0]!),
      );
      expect(closed).toBe(true);
      // The block at hand when the close began and at most one more; the file holds many more.
      expect(blocksAfter).toBeLessThanOrEqual(1);
      expect(logged.filter((l) => l.includes('"level":50') || l.includes('could not be written'))).toEqual(
        [],
      );
      expect(fs.readdirSync(path.join(dir, 'graph')).filter((f) => /rows|point-reads/.test(f))).toEqual([]);
    },
  );

  it('reads from the file, which a later start opens instead of writing it again', async () => {
    let store = await open('wait');
    expect((await store.getCompany('boeing'))?.name).toBe('Boeing Co');
    await store.close();
    expect(files()).toHaveLength(1);
    // Changed behind the store's back (same length, so the index still fits): only a read from the file can show this name.
    const file = path.join(dir, 'graph', files()[0]!);
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('"Boeing Co"');
    expect(at).toBeGreaterThan(0);
    bytes.write('"BOEING CO"', at);
    fs.writeFileSync(file, bytes);
    store = await open('wait', false);
    try {
      expect((await store.getCompany('boeing'))?.name).toBe('BOEING CO');
      expect(count('point-read file written')).toBe(1);
      expect(count('point-read file opened')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('writes the file anew after the data changes, so a read never shows the old data', async () => {
    const store = await open('wait');
    try {
      expect(await store.getEdge('e-new')).toBeNull();
      await store.runScript([
        "MATCH (c:Company {vid: 'boeing'}) SET c.name = 'Boeing Renamed'",
        "CREATE (:Edge {edge_id: 'e-new', supplier_id: 'lonely', customer_id: 'mueller', label: 'supply', confidence_score: 0.7, evidences: '[]'})",
      ]);
      expect((await store.getCompany('boeing'))?.name).toBe('Boeing Renamed');
      expect((await store.getEdge('e-new'))?.customer_id).toBe('mueller');
      expect(count('point-read file written')).toBe(2);
      expect(files()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('removes the edges a write cut off by a crash kept apart, once it writes the file again', async () => {
    const store = await open('wait');
    try {
      await store.getCompany(VIDS[0]!);
      const [file] = files();
      const graph = path.join(dir, 'graph');
      const kept = () => fs.readdirSync(graph).filter((f) => f.startsWith(`${file}.edges-`));
      const [current] = kept();
      expect(current).toBeDefined();
      // Left by processes that ended mid-write (no process has an id that high), and one by a process
      // still running (this one's parent), whose write may be under way.
      const dead = [`${file}.edges-999999999-abc-1`, `${file}.edges-999999998-abd-2`];
      const running = `${file}.edges-${process.ppid}-abe-3`;
      for (const name of [...dead, running]) fs.writeFileSync(path.join(graph, name), 'edge lines');
      await store.runScript(["MATCH (c:Company {vid: 'boeing'}) SET c.name = 'Boeing Renamed'"]);
      expect((await store.getCompany('boeing'))?.name).toBe('Boeing Renamed');
      expect(count('point-read file written')).toBe(2);
      const after = kept();
      expect(after).not.toContain(dead[0]);
      expect(after).not.toContain(dead[1]);
      expect(after).toContain(running);
      // The new file's own, and not the one it replaced.
      expect(after).toHaveLength(2);
      expect(after).not.toContain(current);
      expect((await store.getEdge('e1'))?.supplier_id).toBe('bolt');
    } finally {
      await store.close();
    }
  });

  it('writes over a file it cannot read', async () => {
    let store = await open('wait');
    await store.getCompany('boeing');
    await store.close();
    const file = path.join(dir, 'graph', files()[0]!);
    fs.writeFileSync(file, 'not a database');
    store = await open('wait', false);
    try {
      expect((await store.getCompany('boeing'))?.name).toBe('Boeing Co');
      expect(count('point-read file unreadable')).toBe(1);
      expect(count('point-read file written')).toBe(2);
      expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes('.tmp'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('holds the companies only unless asked for the edges too, which the engine then answers', async () => {
    let store = await open('wait', true, false);
    expect((await store.getEdge('e4'))?.supplier_id).toBe('acme-jp');
    await store.close();
    expect(pointFileCounts(path.join(dir, 'graph', files()[0]!))).toEqual({ companies: 8, edges: 0 });
    // Asked for the edges now: a file written without them is not that file.
    store = await open('wait', false, true);
    try {
      expect((await store.getEdge('e4'))?.supplier_id).toBe('acme-jp');
      expect(count('point-read file written')).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('keeps the file written with the edges when they are turned off, and leaves edges to the engine', async () => {
    let store = await open('wait', true, true);
    expect((await store.getEdge('e4'))?.supplier_id).toBe('acme-jp');
    await store.close();
    // Changed behind the store's back (same length): only a read from the file can show these. The
    // edges are kept as staged lines in a file of their own beside it.
    const graphDir = path.join(dir, 'graph');
    const edgesApart = fs.readdirSync(graphDir).filter((f) => f.includes('.point-reads.edges-'));
    expect(edgesApart).toHaveLength(1);
    for (const [name, from, to] of [
      [files()[0]!, '"Boeing Co"', '"BOEING CO"'],
      [edgesApart[0]!, 'e4\tacme-jp\t', 'e4\tACME-JP\t'],
    ]) {
      const file = path.join(graphDir, name!);
      const bytes = fs.readFileSync(file);
      const at = bytes.indexOf(from!);
      expect(at).toBeGreaterThan(0);
      bytes.write(to!, at);
      fs.writeFileSync(file, bytes);
    }
    store = await open('wait', false, false);
    try {
      expect((await store.getCompany('boeing'))?.name).toBe('BOEING CO');
      expect((await store.getEdge('e4'))?.supplier_id).toBe('acme-jp');
      expect(count('point-read file written')).toBe(1);
      expect(count('point-read file opened')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('reads the file through into the page cache once it holds it, when asked to', async () => {
    const warmed = () =>
      logged
        .map((l) => JSON.parse(l) as { msg: string; bytes?: number; available?: number })
        .filter((e) => e.msg.startsWith('point-read file') && e.msg.includes('warm'));
    /** Opens the store, and closes it once it has read the file and logged what it did about warming. */
    const reopen = async (warmPointFile: boolean, seed = false) => {
      const before = warmed().length;
      const store = await openSeededStore(dir, logged, { pointFile: 'wait', warmPointFile }, seed);
      await store.getCompany('boeing'); // in `wait` mode, the first read waits for the file
      const deadline = Date.now() + 5_000;
      while (warmPointFile && warmed().length === before && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      await store.close();
    };
    await reopen(false, true);
    expect(warmed()).toEqual([]);
    const bytes = fs.statSync(path.join(dir, 'graph', files()[0]!)).size;
    await reopen(true);
    expect(warmed()).toEqual([
      expect.objectContaining({ msg: 'point-read file warmed into the page cache', bytes }),
    ]);
    // Not when the file would take more than half the memory available.
    const freemem = jest.spyOn(os, 'freemem').mockReturnValue(2 * bytes - 1);
    try {
      await reopen(true);
    } finally {
      freemem.mockRestore();
    }
    expect(warmed()[1]).toEqual(
      expect.objectContaining({
        msg: 'point-read file not warmed: more than half the memory available',
        bytes,
      }),
    );
  });

  it('leaves every read to the engine when off, and writes no file', async () => {
    const store = await open('off');
    try {
      expect((await store.getCompany('boeing'))?.name).toBe('Boeing Co');
      expect(files()).toEqual([]);
      expect(count('point-read file')).toBe(0);
    } finally {
      await store.close();
    }
  });
});

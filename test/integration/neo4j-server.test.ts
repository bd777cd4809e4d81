import neo4j from 'neo4j-driver';
import type { Driver } from 'neo4j-driver';
import fs from 'node:fs';
import path from 'node:path';
import { cypherRoot, loadQuery, splitStatements } from '../../src/store/cypher-files';
import { NEO4J_QUERY_NAMES, NEO4J_SCRIPTS } from '../../src/store/neo4j/neo4j.store';
import type { Neo4jGraphStore } from '../../src/store/neo4j/neo4j.store';
import type { TierWalkRequest } from '../../src/store/graph-store';
import type { TierCompany, TierRelationship } from '../../src/domain/tier-walk';
import { asSent } from '../support/cypher-text';
import { readSeed, tempDir } from '../support/paths';
import { NEO4J_HINT, emptyNeo4j, neo4jAvailability, openNeo4jStore, startNeo4j } from '../support/neo4j';
import type { Neo4jTarget } from '../support/neo4j';
import { skipVisibly } from '../support/services';
import { Relay } from '../support/relay';
import { makeQueue } from '../support/job-queue-harness';
import { TierViewService } from '../../src/services/tierview.service';
import { DOWNLOAD_PREFIX } from '../../src/blobs/local/local.blob-store';
import pino from 'pino';

/**
 * What only a real Neo4j 5 server can tell: how it plans every query we send it,
 * and what the seeds leave in the database.
 */
if (neo4jAvailability() === null) {
  skipVisibly(describe.skip, 'Neo4j server checks', NEO4J_HINT, () => {
    it('runs against Neo4j', () => undefined);
  });
} else {
  describe('Neo4j server checks', () => {
    jest.setTimeout(180_000);
    let target: Neo4jTarget;
    let store: Neo4jGraphStore;
    let driver: Driver;

    beforeAll(async () => {
      target = await startNeo4j();
      await emptyNeo4j(target);
      store = await openNeo4jStore(target);
      driver = neo4j.driver(target.uri, neo4j.auth.basic(target.user, target.password), {
        disableLosslessIntegers: true,
      });
    });
    afterAll(async () => {
      await driver?.close();
      await store?.close();
      if (target) await emptyNeo4j(target);
      await target?.stop();
    });

    async function run(text: string, params: Record<string, unknown> = {}) {
      return driver.executeQuery(text, params, { database: target.database });
    }

    it('plans every query and script statement the adapter sends without a deprecation notice', async () => {
      const statements: [string, string][] = [
        ...NEO4J_QUERY_NAMES.map((n): [string, string] => [n, asSent(loadQuery(n, 'neo4j')).text]),
        ...NEO4J_SCRIPTS.flatMap((n) =>
          splitStatements(fs.readFileSync(path.join(cypherRoot(), `${n}.neo4j.cypher`), 'utf8')).map(
            (s): [string, string] => [n, s],
          ),
        ),
      ];
      const deprecated: string[] = [];
      for (const [name, text] of statements) {
        // Schema statements cannot be explained; they are checked by running them (migration).
        if (/^\s*(CREATE|DROP)\s+(CONSTRAINT|INDEX|FULLTEXT|RANGE|TEXT|POINT|VECTOR)/im.test(strip(text)))
          continue;
        const res = await run(`EXPLAIN ${strip(text)}`);
        for (const n of res.summary.notifications)
          if (/deprecat/i.test(`${n.code} ${n.title}`))
            deprecated.push(`${name}: ${n.title} ${n.description}`);
      }
      expect(statements.length).toBeGreaterThan(NEO4J_QUERY_NAMES.length);
      expect(deprecated).toEqual([]);
    });

    it('refuses a wrong password, and opening says which settings to check', async () => {
      const wrong = { ...target, password: `${target.password}-wrong` };
      await expect(openNeo4jStore(wrong)).rejects.toThrow(
        `Neo4j at ${target.uri} refused the login of user "${target.user}": check NEO4J_USER and NEO4J_PASSWORD`,
      );
    });

    it('refuses a database the server does not have, naming NEO4J_DATABASE', async () => {
      await expect(openNeo4jStore({ ...target, database: 'nosuchdb' })).rejects.toThrow(
        `Neo4j at ${target.uri} has no database "nosuchdb": create it, or set NEO4J_DATABASE to one it has`,
      );
    });

    it('names its data for locally saved derived data: per database, moving on with every seed', async () => {
      const dir = tempDir('neo4j-derived');
      const named = await openNeo4jStore(target, { derivedDir: dir });
      try {
        const before = named.derivedDataFile('search-index')!;
        expect(path.dirname(before.file)).toBe(dir);
        expect(before.key).toMatch(/^.+#\d+$/);
        await named.runScript([
          "MERGE (:Company {vid: 'derived-probe'})",
          "MATCH (c:Company {vid: 'derived-probe'}) DETACH DELETE c",
        ]);
        const after = named.derivedDataFile('search-index')!;
        expect(after.file).toBe(before.file);
        expect(after.key).not.toBe(before.key);
        // Emptied (its generation record too) and filled again up to the same generation: another lineage.
        const lineageOf = (key: string) => key.slice(0, key.lastIndexOf('#'));
        await run('MATCH (m:TiergraphMeta) DELETE m');
        await named.runScript(["MERGE (:Company {vid: 'derived-probe'})"]);
        await named.runScript(["MATCH (c:Company {vid: 'derived-probe'}) DETACH DELETE c"]);
        const refilled = named.derivedDataFile('search-index')!;
        expect(refilled.key.endsWith('#2')).toBe(true);
        expect(lineageOf(refilled.key)).not.toBe(lineageOf(after.key));
        // Without a directory there is nowhere to save.
        expect(store.derivedDataFile('search-index')).toBeNull();
      } finally {
        await named.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    describe('after the demo seed', () => {
      beforeAll(async () => {
        await store.runScript(splitStatements(readSeed('demo.cypher')));
      });

      it('an export while Neo4j cannot be reached waits for it, and ends SUCCESS once it answers', async () => {
        const [hub] = (
          await run(
            'MATCH (:Company)-[:SUPPLIES]->(c:Company) RETURN c.vid AS vid, count(*) AS n ORDER BY n DESC, vid LIMIT 1',
          )
        ).records.map((r) => r.get('vid') as string);
        const address = new URL(target.uri.replace(/^[a-z+]+:/, 'http:'));
        const relay = new Relay(address.hostname, Number(address.port || 7687));
        await relay.open();
        const dir = tempDir('neo4j-export-away');
        const through = await openNeo4jStore({ ...target, uri: `bolt://127.0.0.1:${relay.port}` });
        // A lock and a time limit as long as a server's: on a loaded machine a 2 s lock can lapse while
        // the driver tries again for its 30 s, and a new attempt would start those tries over.
        // What the export logs at warn and above, shown should it never wait: which failure it took
        // for something other than an outage.
        const logged: string[] = [];
        const log = pino(
          { level: 'warn' },
          {
            write: (line: string) => {
              const e = JSON.parse(line) as {
                msg?: string;
                err?: { type?: string; code?: unknown; message?: string };
              };
              logged.push(
                `${e.msg} (${e.err?.type}, ${String(e.err?.code)}: ${e.err?.message?.slice(0, 300)})`,
              );
            },
          },
        );
        const { queue, engine, blobs } = makeQueue(dir, through, (b) => new TierViewService(through, b), {
          lockS: 30,
          timeoutS: 300,
          log,
        });
        try {
          // Asked while Neo4j answers (a start checks the root), the run is taken up once it does not.
          await engine.runs.open();
          const run = await queue.submit({
            root_nodes: hub!,
            num_tiers: 2,
            direction: 'supplier',
            min_evid_date: null,
            output_multiple_tables: false,
            callback_url: null,
          });
          await relay.cut();
          await queue.start();
          const waiting = async (): Promise<string> => {
            const seen: string[] = [];
            for (const end = Date.now() + 120_000; Date.now() < end;) {
              const { state } = await queue.view(run.runId);
              const m = state.state_message ?? '';
              if (m.startsWith('waiting for the graph database')) return m;
              const line = `${state.life_cycle_state}/${state.result_state ?? '-'}: ${m}`;
              if (seen[seen.length - 1] !== line) seen.push(line);
              await new Promise((r) => setTimeout(r, 200));
            }
            return `never waited; seen: ${seen.join(' | ')}; logged: ${logged.join(' | ')}`;
          };
          expect(await waiting()).toMatch(
            /^waiting for the graph database, which does not answer; trying again in \d+ s$/,
          );
          await relay.open();
          let view = await queue.view(run.runId);
          for (
            const end = Date.now() + 90_000;
            Date.now() < end && view.state.life_cycle_state !== 'TERMINATED';
          ) {
            await new Promise((r) => setTimeout(r, 250));
            view = await queue.view(run.runId);
          }
          expect(view.state).toMatchObject({ life_cycle_state: 'TERMINATED', result_state: 'SUCCESS' });
          const links = JSON.parse((view.output as { result: string }).result) as Record<string, string>;
          const url = new URL(links.tierview_file!);
          const file = blobs.verify(
            url.pathname.slice(DOWNLOAD_PREFIX.length),
            url.searchParams.get('expires'),
            url.searchParams.get('signature'),
          );
          expect(fs.readFileSync(file, 'utf8')).toContain(hub!);
        } finally {
          await queue.close();
          await engine.close();
          await through.close();
          await relay.cut();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }, 300_000);

      it('walks tiers and lists relationships from the memory, never walking a generation old', async () => {
        const [hub] = (
          await run(
            'MATCH (:Company)-[:SUPPLIES]->(c:Company) RETURN c.vid AS vid, count(*) AS n ORDER BY n DESC, vid LIMIT 1',
          )
        ).records.map((r) => r.get('vid') as string);
        const request: TierWalkRequest = { root: hub!, direction: 'suppliers', tiers: 3, evidenceFrom: null };
        async function walk(on: Neo4jGraphStore) {
          const companies: TierCompany[] = [];
          const rows: TierRelationship[] = [];
          await on.walkTiers(request, {
            companies: (batch) => void companies.push(...batch),
            relationships: (_tier, batch) => void rows.push(...batch),
          });
          const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
          return {
            companies: companies.sort((a, b) => order(a.vid, b.vid)),
            rows: rows.sort((a, b) => order(a.edge_id, b.edge_id)),
          };
        }
        const dir = tempDir('neo4j-walks');
        const held = await openNeo4jStore(target, { walkMemory: 'wait', derivedDir: dir });
        let again: Neo4jGraphStore | null = null;
        try {
          const byQueries = await walk(store);
          expect(byQueries.companies.length).toBeGreaterThan(3);
          expect(byQueries.rows.some((r) => r.hs_codes.length > 0 && r.evidence_types.length > 0)).toBe(true);
          // Everything an export shows, from memory as from frontier queries.
          expect(await walk(held)).toEqual(byQueries);

          // Plain lists come from the memory too: a relationship weakened behind the store's back,
          // without a new generation, is still listed as it was read.
          const list = { minConfidence: 0.2, evidenceFrom: null, offset: 0, limit: 50 };
          const listed = await held.listRelationships(hub!, 'suppliers', 'company', list);
          expect(listed).toEqual(await store.listRelationships(hub!, 'suppliers', 'company', list));
          const weakened = listed.items[0]!.relationship.relationship_id;
          const weaken = (to: number) =>
            run('MATCH ()-[r:SUPPLIES {edge_id: $id}]->() SET r.confidence_score = $to', {
              id: weakened,
              to,
            });
          await weaken(0.01);
          try {
            expect(await held.listRelationships(hub!, 'suppliers', 'company', list)).toEqual(listed);
            const fromNeo4j = await store.listRelationships(hub!, 'suppliers', 'company', list);
            expect(fromNeo4j.items.map((i) => i.relationship.relationship_id)).not.toContain(weakened);
          } finally {
            await weaken(listed.items[0]!.relationship.confidence_score);
          }

          // Renamed behind the store's back, without a new generation: the memory still answers.
          const supplier = byQueries.rows[0]!.supplier.vid;
          const name = (
            await run('MATCH (c:Company {vid: $v}) RETURN c.name AS name', { v: supplier })
          ).records[0]!.get('name') as string;
          await run('MATCH (c:Company {vid: $v}) SET c.name = $n', {
            v: supplier,
            n: 'Renamed Behind The Store',
          });
          const nameIn = (w: Awaited<ReturnType<typeof walk>>) =>
            w.companies.find((c) => c.vid === supplier)!.name;
          try {
            expect(nameIn(await walk(held))).toBe(name);
            // Saved when read (closing waits for it): a server started on the same data loads it
            // instead of reading Neo4j, which would give the new name.
            await held.close();
            expect(fs.readdirSync(dir).filter((f) => f.endsWith('.walk-memory'))).toHaveLength(1);
            again = await openNeo4jStore(target, { walkMemory: 'wait', derivedDir: dir });
            expect(nameIn(await walk(again))).toBe(name);
            // As an import by another instance ends: the next walk sees the new data at once, not at
            // the next poll (60 s here).
            await run(asSent(loadQuery('graph/bump-generation', 'neo4j')).text);
            expect(nameIn(await walk(again))).toBe('Renamed Behind The Store');
          } finally {
            await run('MATCH (c:Company {vid: $v}) SET c.name = $n', { v: supplier, n: name });
            await run(asSent(loadQuery('graph/bump-generation', 'neo4j')).text);
          }
        } finally {
          await held.close();
          await again?.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });

      it('answers profiles, edges and list counterparts from the point-read file of the generation it saw', async () => {
        const vids = (await run('MATCH (c:Company) RETURN c.vid AS vid ORDER BY vid')).records.map(
          (r) => r.get('vid') as string,
        );
        const edgeIds = (await run('MATCH (e:Edge) RETURN e.edge_id AS id ORDER BY id')).records.map(
          (r) => r.get('id') as string,
        );
        expect(vids.length).toBeGreaterThan(10);
        expect(edgeIds.length).toBeGreaterThan(10);
        const dir = tempDir('neo4j-points');
        const held = await openNeo4jStore(target, { pointFile: 'wait', derivedDir: dir });
        let again: Neo4jGraphStore | null = null;
        let stopPoll = () => undefined as void;
        const vid = vids[0]!;
        const name = (await store.getCompany(vid))!.name;
        try {
          // Every profile and edge as Neo4j gives it, and nothing for a key that is not there.
          for (const v of vids) expect(await held.getCompany(v)).toEqual(await store.getCompany(v));
          for (const id of edgeIds) expect(await held.getEdge(id)).toEqual(await store.getEdge(id));
          expect(await held.getCompany('no-such-company')).toBeNull();
          expect(await held.getEdge('no-such-edge')).toBeNull();
          expect(await held.getCompanies(vids.slice(0, 5))).toEqual(
            await store.getCompanies(vids.slice(0, 5)),
          );
          const list = { minConfidence: 0, evidenceFrom: null, offset: 0, limit: 50 };
          const [hub] = (
            await run(
              'MATCH (:Company)-[:SUPPLIES]->(c:Company) RETURN c.vid AS vid, count(*) AS n ORDER BY n DESC, vid LIMIT 1',
            )
          ).records.map((r) => r.get('vid') as string);
          expect(await held.listRelationships(hub!, 'suppliers', 'company', list)).toEqual(
            await store.listRelationships(hub!, 'suppliers', 'company', list),
          );

          // Renamed behind the store's back, without a new generation: the file still answers.
          await run('MATCH (c:Company {vid: $v}) SET c.name = $n', { v: vid, n: 'Renamed Behind The Store' });
          expect((await store.getCompany(vid))!.name).toBe('Renamed Behind The Store');
          expect((await held.getCompany(vid))!.name).toBe(name);
          // Kept beside the data: a server started on the same generation opens it instead of
          // reading Neo4j again, which would give the new name.
          await held.close();
          expect(fs.readdirSync(dir).filter((f) => f.endsWith('.point-reads'))).toHaveLength(1);
          again = await openNeo4jStore(target, { pointFile: 'wait', derivedDir: dir });
          expect((await again.getCompany(vid))!.name).toBe(name);
          // An import by another instance: seen at the next poll, and the file is written anew.
          stopPoll = again.followExternalImports(50);
          await run(asSent(loadQuery('graph/bump-generation', 'neo4j')).text);
          const deadline = Date.now() + 10_000;
          while ((await again.getCompany(vid))!.name === name && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 50));
          expect((await again.getCompany(vid))!.name).toBe('Renamed Behind The Store');
        } finally {
          stopPoll();
          await run('MATCH (c:Company {vid: $v}) SET c.name = $n', { v: vid, n: name });
          await run(asSent(loadQuery('graph/bump-generation', 'neo4j')).text);
          await held.close();
          await again?.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });

      it('reads and writes through a routing driver (neo4j://), as a cluster is reached', async () => {
        // A single server answers the routing protocol with itself in every role: what a cluster's
        // routing table adds is which member each session goes to, not another code path of ours.
        const routed = { ...target, uri: target.uri.replace(/^bolt(\+s|\+ssc)?:/, 'neo4j$1:') };
        expect(routed.uri).toMatch(/^neo4j(\+s|\+ssc)?:\/\//);
        // Opening migrates: write sessions, routed to the writer.
        const other = await openNeo4jStore(routed);
        const marker = `routed-${process.pid}-${Date.now()}`;
        try {
          const [hub] = (
            await run(
              'MATCH (:Company)-[:SUPPLIES]->(c:Company) RETURN c.vid AS vid, count(*) AS n ORDER BY n DESC, vid LIMIT 1',
            )
          ).records.map((r) => r.get('vid') as string);
          const list = { minConfidence: 0, evidenceFrom: null, offset: 0, limit: 50 };
          const page = await other.listRelationships(hub!, 'suppliers', 'company', list);
          expect(page.items.length).toBeGreaterThan(0);
          expect(page).toEqual(await store.listRelationships(hub!, 'suppliers', 'company', list));
          expect(await other.getCompany(hub!)).toEqual(await store.getCompany(hub!));
          const edgeId = page.items[0]!.relationship.edge_ids[0]!;
          expect(await other.getEdge(edgeId)).toEqual(await store.getEdge(edgeId));
          expect(await other.stats()).toEqual(await store.stats());
          // A script's write goes to the writer too, and the bolt:// store reads it back.
          expect(await other.runScript([`CREATE (:TiergraphRoutedProbe {marker: '${marker}'})`])).toBe(1);
          const found = await run('MATCH (p:TiergraphRoutedProbe {marker: $m}) RETURN count(p) AS n', {
            m: marker,
          });
          expect(found.records[0]!.get('n')).toBe(1);
        } finally {
          await run('MATCH (p:TiergraphRoutedProbe) DELETE p');
          await other.close();
        }
      });

      it('writes every confidence score as a FLOAT, as imports do', async () => {
        const res = await run(
          `CALL () { MATCH ()-[r:SUPPLIES|CLUSTER_SUPPLIES]->() RETURN r.confidence_score AS v
             UNION ALL MATCH (e:Edge) RETURN e.confidence_score AS v }
           RETURN valueType(v) AS t, count(*) AS n ORDER BY t`,
        );
        const types = Object.fromEntries(
          res.records.map((r) => [r.get('t') as string, r.get('n') as number]),
        );
        expect(Object.keys(types)).toEqual(['FLOAT NOT NULL']);
      });

      it('stores domains, websites, hs_codes, evidence types and edge ids as real lists', async () => {
        const res = await run(
          `CALL () { MATCH (c:Company) UNWIND [c.domains, c.websites] AS v RETURN v
             UNION ALL MATCH ()-[r:SUPPLIES]->() UNWIND [r.hs_codes, r.evidence_types] AS v RETURN v
             UNION ALL MATCH ()-[r:CLUSTER_SUPPLIES]->() UNWIND [r.edge_ids, r.evidence_types] AS v RETURN v }
           WITH v WHERE v IS NOT NULL
           RETURN valueType(v) STARTS WITH 'LIST' AS list, count(*) AS n`,
        );
        const byKind = Object.fromEntries(
          res.records.map((r) => [String(r.get('list')), r.get('n') as number]),
        );
        expect(byKind).toEqual({ true: expect.any(Number) as number });
        const [first] = (
          await run(
            'MATCH (c:Company) WHERE size(c.domains) > 0 RETURN c.vid AS vid, c.domains[0] AS d LIMIT 1',
          )
        ).records;
        const found = await run('MATCH (c:Company) WHERE $d IN c.domains RETURN collect(c.vid) AS vids', {
          d: first!.get('d') as string,
        });
        expect(found.records[0]!.get('vids')).toContain(first!.get('vid'));
        // What the API reads back is the same list.
        const profile = await store.getCompany(first!.get('vid') as string);
        expect(profile!.domains).toContain(first!.get('d'));
      });
    });
  });
}

/** The statement without its comment lines. */
function strip(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n')
    .trim()
    .replace(/;$/, '');
}

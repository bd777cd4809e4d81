import fs from 'node:fs';
import path from 'node:path';
import { stageImport } from '../../src/import/stage';
import type { CypherQuery } from '../../src/store/cypher-files';
import { importIntoNeo4j } from '../../src/store/neo4j/neo4j-import';
import type { UpsertQueries } from '../../src/store/neo4j/neo4j-import';
import type { Neo4jExecutor } from '../../src/store/neo4j/executor';
import { companyRow, relationshipRow, writeImportDir } from '../support/factories';
import { tempDir } from '../support/paths';

/** An executor that commits each write after a pause, counting how many overlap. */
function fakeExecutor(failOnWrite = 0) {
  const seen = { writes: 0, rows: 0, concurrent: 0, most: 0, prunes: 0 };
  const exec = {
    write: async (_q: CypherQuery, params: { rows: unknown[] }) => {
      const n = ++seen.writes;
      seen.concurrent++;
      seen.most = Math.max(seen.most, seen.concurrent);
      await new Promise((r) => setTimeout(r, 5));
      seen.concurrent--;
      if (n === failOnWrite) throw new Error(`write ${n} failed`);
      seen.rows += params.rows.length;
      return [];
    },
    autoCommit: () => {
      seen.prunes++;
      return Promise.resolve([]);
    },
  };
  return { exec: exec as unknown as Neo4jExecutor, seen };
}

const upserts = { Company: {}, Edge: {}, SUPPLIES: {}, CLUSTER_SUPPLIES: {} } as unknown as UpsertQueries;

describe('importIntoNeo4j: transactions in flight', () => {
  let work: string;
  let staging: string;
  // Rows are batched per 64 KB read of a staging file: long descriptions make several.
  const companies = 200;

  beforeAll(async () => {
    work = tempDir('neo4j-batches');
    const vids = Array.from({ length: companies }, (_, i) => `c${i}`);
    writeImportDir(path.join(work, 'input'), {
      companies: vids.map((vid) => companyRow({ vid, description: `${vid} makes things. `.repeat(120) })),
      relationships: vids.slice(1).map((vid, i) => relationshipRow(vids[i]!, vid)),
    });
    staging = path.join(work, 'staging');
    await stageImport(path.join(work, 'input'), staging);
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('keeps up to `parallel` batches in flight and writes every row once', async () => {
    for (const parallel of [1, 3]) {
      const { exec, seen } = fakeExecutor();
      const r = await importIntoNeo4j(exec, upserts, 'MATCH (n) RETURN n;', staging, {
        batchSize: 4,
        parallel,
      });
      expect(seen.most).toBe(parallel);
      expect(seen.rows).toBe(Object.values(r.rows).reduce((a, b) => a + b, 0));
      expect(r.rows.Company).toBe(companies);
      expect(seen.prunes).toBe(1);
    }
  });

  it('fails with the first failed batch, after the others in flight have ended, and prunes nothing', async () => {
    const { exec, seen } = fakeExecutor(3);
    await expect(
      importIntoNeo4j(exec, upserts, 'MATCH (n) RETURN n;', staging, { batchSize: 4, parallel: 3 }),
    ).rejects.toThrow('write 3 failed');
    expect(seen.concurrent).toBe(0);
    expect(seen.prunes).toBe(0);
    // The batches after the failure were not sent.
    expect(seen.writes).toBeLessThan(8);
  });
});

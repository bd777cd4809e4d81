import { randomBytes } from 'node:crypto';
import { createLogger } from '../../src/logger';
import { Agenda } from 'agenda';
import { Pool } from 'pg';
import { openPostgresJobsEngine } from '../../src/jobs/engines/postgres/postgres.jobs-engine';
import { POSTGRES_HINT, describeWithService, testPostgresUrl } from '../support/services';

describeWithService('PostgreSQL jobs engine', testPostgresUrl(), POSTGRES_HINT, (url) => {
  let admin: Pool;
  const schemas: string[] = [];
  beforeAll(() => {
    admin = new Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await admin.end();
  });

  /** A URL whose tables land in an empty schema of their own, as on a new database. */
  async function emptyDatabaseUrl(): Promise<string> {
    const schema = `jobs_engine_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    return u.toString();
  }

  test('processes starting at once on an empty database all come up', async () => {
    // Each round is a new empty database; without the schema lock most rounds had
    // a process fail on the catalog's unique index while creating the jobs table.
    for (let round = 0; round < 3; round++) {
      const target = await emptyDatabaseUrl();
      const engines = Array.from({ length: 4 }, () => openPostgresJobsEngine(target, createLogger('silent')));
      const started = await Promise.allSettled(
        engines.map(async (e) => {
          const agenda = new Agenda({ backend: e.agendaBackend });
          await agenda.ready;
          await e.runs.open();
        }),
      );
      for (const e of engines) await e.close();
      const failures = started.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(failures).toEqual([]);
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { lintCypherQuery } from '@neo4j-cypher/language-support';
import { cypherRoot, loadQuery, splitStatements } from '../../src/store/cypher-files';
import type { CypherQuery, ParamType } from '../../src/store/cypher-files';
import { toNeo4jDialect } from '../../src/store/dialect';
import { toDriverParams } from '../../src/store/neo4j/driver';
import { NEO4J_QUERY_NAMES, NEO4J_SCRIPTS } from '../../src/store/neo4j/neo4j.store';
import { asSent, queryBody, usedParams } from '../support/cypher-text';
import { ROOT } from '../support/paths';

/**
 * Every file that exists for one engine only, with why. A new variant must be
 * added here, so that a dialect difference is always a decision someone wrote down.
 */
const ENGINE_FILES: Record<string, string> = {
  'company/vid-offsets.embedded.cypher': 'internal offsets are the embedded engine’s cheap counterpart key',
  'company/profiles-range.embedded.cypher': 'profiles by internal offset range for the point-read file',
  'company/export-profiles.embedded.cypher':
    'every profile in the staging’s text, for the engine to write to a file for the point-read file',
  'edge/range.embedded.cypher': 'edges by internal offset range for the point-read file',
  'edge/export.embedded.cypher':
    'every edge in the staging’s text, its confidence exact, for the engine to write to a file for the point-read file',
  'search/scan-companies-range.embedded.cypher':
    'search fields by internal offset range: one query for every company overflows the buffer pool',
  'search/export-companies.embedded.cypher':
    'every company’s search fields in the staging’s text, for the engine to write to a file',
  'edge/count.embedded.cypher': 'how many offset ranges the point-read file is read in',
  'relationship/list-suppliers.embedded.cypher':
    'returns internal offsets instead of vids (embedded sort cost)',
  'relationship/list-customers.embedded.cypher':
    'returns internal offsets instead of vids (embedded sort cost)',
  'relationship/list-cluster-suppliers.embedded.cypher': 'returns internal offsets instead of vids',
  'relationship/list-cluster-customers.embedded.cypher': 'returns internal offsets instead of vids',
  'schema/create.embedded.cypher': 'tables with primary keys (embedded DDL)',
  'schema/create.neo4j.cypher': 'constraints and indexes (Neo4j DDL)',
  'tierview/tiers-suppliers.embedded.cypher':
    'recursive SHORTEST join with literal filters (embedded syntax)',
  'tierview/tiers-customers.embedded.cypher':
    'recursive SHORTEST join with literal filters (embedded syntax)',
  'tierview/tier-names-suppliers.embedded.cypher':
    'the recursive join of tiers-suppliers with only the names a row shows',
  'tierview/tier-names-customers.embedded.cypher':
    'the recursive join of tiers-customers with only the names a row shows',
  'tierview/tier-relationships-suppliers.embedded.cypher': 'per-tier partitions by internal offset',
  'tierview/tier-relationships-customers.embedded.cypher': 'per-tier partitions by internal offset',
  'tierview/memory-companies.embedded.cypher': 'names by internal offset for the walks held in memory',
  'tierview/memory-relationships.embedded.cypher':
    'relationships by internal offset range for the walks held in memory',
  'tierview/export-memory-relationships.embedded.cypher':
    'every relationship in the staging’s text, its confidence exact, for the engine to write to a file for the walks held in memory',
  'tierview/memory-companies.neo4j.cypher':
    'companies by vid (Neo4j has no dense offsets) for the walks held in memory',
  'tierview/memory-relationships.neo4j.cypher':
    'every relationship by vids in one streamed read for the walks held in memory',
  'company/profiles-all.neo4j.cypher':
    'every profile in one streamed read for the point-read file (Neo4j has no dense offsets)',
  'edge/all.neo4j.cypher': 'every edge in one streamed read for the point-read file',
  'edge/count.neo4j.cypher': 'the count alone (Neo4j has no internal offsets)',
  'company/get-cores.neo4j.cypher': 'one round trip per page; the embedded engine is faster per key',
  'company/get-summaries.neo4j.cypher': 'one round trip per page; the embedded engine is faster per key',
  'graph/generation.neo4j.cypher': 'shared generation for several instances (embedded watches a file)',
  'graph/bump-generation.neo4j.cypher': 'shared generation for several instances',
  'graph/set-schema-version.neo4j.cypher': 'schema version of the migration',
  'import/upsert-companies.neo4j.cypher': 'batched UNWIND import (the embedded engine bulk-loads files)',
  'import/upsert-edges.neo4j.cypher': 'batched UNWIND import',
  'import/upsert-supplies.neo4j.cypher': 'batched UNWIND import',
  'import/upsert-cluster-supplies.neo4j.cypher': 'batched UNWIND import',
  'import/prune.neo4j.cypher': 'removes what an upsert import did not write',
};

function cypherFiles(): string[] {
  return fs
    .readdirSync(cypherRoot(), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.cypher'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

const SAMPLE: Record<ParamType, unknown> = {
  STRING: 'x',
  'STRING[]': ['x'],
  INT64: 3,
  DOUBLE: 0.5,
  BOOLEAN: true,
  TIMESTAMP: new Date('2021-03-04T05:06:07Z'),
  'MAP[]': [{ a: 1 }],
};

/** Syntax errors of `text` read as Cypher 5 (warnings, such as deprecations, are not errors). */
function cypher5Errors(text: string, params: string[]): string[] {
  const parameters = Object.fromEntries(params.map((p) => [p, 'x']));
  return lintCypherQuery(`CYPHER 5 ${text}`, { parameters })
    .filter((d) => d.severity === 1)
    .map((d) => (typeof d.message === 'string' ? d.message : d.message.value));
}

describe('engine-specific Cypher files', () => {
  it('are exactly the listed variants, each with a reason', () => {
    const engineOnly = cypherFiles().filter((f) => /\.(embedded|neo4j)\.cypher$/.test(f));
    expect(engineOnly).toEqual(Object.keys(ENGINE_FILES).sort());
  });
});

describe('what Neo4j runs parses as Cypher 5', () => {
  const plain = cypherFiles().filter((f) => !/\.(embedded|neo4j)\.cypher$/.test(f));

  it.each(plain.map((f) => [f]))('portable query %s', (file) => {
    const q = asSent(loadQuery(file.replace(/\.cypher$/, ''), 'neo4j'));
    expect(cypher5Errors(q.text, [...q.params.keys()])).toEqual([]);
  });

  it.each(NEO4J_QUERY_NAMES.map((n) => [n]))('Neo4j query %s', (name) => {
    const q = asSent(loadQuery(name, 'neo4j'));
    expect(cypher5Errors(q.text, [...q.params.keys()])).toEqual([]);
  });

  it.each(NEO4J_SCRIPTS.map((n) => [n]))('every statement of the Neo4j script %s', (name) => {
    const text = fs.readFileSync(path.join(cypherRoot(), `${name}.neo4j.cypher`), 'utf8');
    const statements = splitStatements(text);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) expect(cypher5Errors(s, ['import_id'])).toEqual([]);
  });

  const seeds = fs.readdirSync(path.join(ROOT, 'seed')).filter((f) => f.endsWith('.cypher'));
  it.each(seeds.map((f) => [f]))('every statement of seed/%s, translated', (file) => {
    const statements = splitStatements(fs.readFileSync(path.join(ROOT, 'seed', file), 'utf8'));
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) expect(cypher5Errors(toNeo4jDialect(s), [])).toEqual([]);
  });

  it('tells a syntax error from a valid query', () => {
    expect(cypher5Errors('MATCH (n) RETRUN n', [])).not.toEqual([]);
    // The embedded engine's recursive filter is not Cypher 5: why those files are variants.
    expect(
      cypher5Errors('MATCH (a)-[e:SUPPLIES* SHORTEST 1..2 (r, n | WHERE r.x > 1)]->(b) RETURN b', []),
    ).not.toEqual([]);
  });
});

describe('Neo4j query parameters, checked without a server', () => {
  const queries: CypherQuery[] = NEO4J_QUERY_NAMES.map((n) => loadQuery(n, 'neo4j'));

  it.each(queries.map((q) => [q.name, q]))('%s declares exactly the parameters it uses', (_n, q) => {
    expect(usedParams(q)).toEqual([...q.params.keys()].sort());
  });

  it.each(queries.map((q) => [q.name, q]))('%s gets driver values of its declared types', (_n, q) => {
    const given = Object.fromEntries([...q.params].map(([name, type]) => [name, SAMPLE[type]]));
    const sent = toDriverParams(q, given);
    expect(Object.keys(sent).sort()).toEqual([...q.params.keys()].sort());
    for (const [name, type] of q.params) {
      const v = sent[name];
      if (type === 'INT64') expect(neo4j.isInt(v) && String(v) === '3').toBe(true);
      else if (type === 'TIMESTAMP') expect(neo4j.isDateTime(v) && String(v)).toBe('2021-03-04T05:06:07Z');
      else expect(v).toEqual(SAMPLE[type]);
    }
  });

  it('refuses a missing, undeclared or mistyped parameter before anything is sent', () => {
    const q = loadQuery('relationship/list-suppliers', 'neo4j');
    const good = Object.fromEntries([...q.params].map(([name, type]) => [name, SAMPLE[type]]));
    const { skip: _skip, ...missing } = good;
    expect(() => toDriverParams(q, missing)).toThrow(/missing parameter \$skip/);
    expect(() => toDriverParams(q, { ...good, extra: 1 })).toThrow(/undeclared parameter \$extra/);
    expect(() => toDriverParams(q, { ...good, limit: 2.5 })).toThrow(/\$limit must be a safe integer/);
  });
});

describe('Neo4j import upserts', () => {
  const upserts = NEO4J_QUERY_NAMES.filter((n) => n.startsWith('import/upsert-')).map((n) =>
    loadQuery(n, 'neo4j'),
  );

  it('replace the properties of what they write, so a re-import drops what the files no longer hold', () => {
    expect(upserts.map((q) => q.name).sort()).toEqual([
      'import/upsert-cluster-supplies',
      'import/upsert-companies',
      'import/upsert-edges',
      'import/upsert-supplies',
    ]);
    for (const q of upserts) {
      const body = queryBody(q);
      // `SET x += map` would keep properties an earlier import wrote and this one did not.
      expect(body).not.toMatch(/\+=/);
      expect(body).toMatch(/\bSET (r|c|e) = row(\.props)?, \1\.import_id = \$import_id/);
    }
  });
});

describe('seed statements in the Neo4j dialect', () => {
  it('turns a list property written as its text literal into a real list, and nothing else', () => {
    expect(
      toNeo4jDialect(
        "CREATE (:Company {vid: 'v', domains: '[a.example,b.example]', websites: '[]', description: '[not a list]'})",
      ),
    ).toBe(
      "CREATE (:Company {vid: 'v', domains: ['a.example', 'b.example'], websites: [], description: '[not a list]'})",
    );
    expect(toNeo4jDialect("MATCH ()-[r:SUPPLIES]->() SET r.hs_codes = '[8708]'")).toBe(
      "MATCH ()-[r:SUPPLIES]->() SET r.hs_codes = ['8708']",
    );
  });
});

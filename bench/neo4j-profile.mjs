// PROFILE of the queries behind the read cases and one tier-view step, on a Neo4j
// server that bench/run.mjs --store neo4j has imported into. Prints each plan's
// operators with rows and db hits, and the time of a second, warm run.
//   node bench/neo4j-profile.mjs --neo4j-uri bolt://127.0.0.1:7688 [--data-dir bench/data]
import fs from 'node:fs';
import path from 'node:path';
import neo4j from 'neo4j-driver';
import { ROOT, parseArgs } from './common.mjs';

const args = parseArgs();
const uri = args['neo4j-uri'] ?? process.env.NEO4J_URI;
if (!uri) {
  process.stderr.write('neo4j-profile: --neo4j-uri (or NEO4J_URI) is required\n');
  process.exit(2);
}
const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'bench', 'data'));
const datasetDir = path.join(dataDir, 'dataset');

/** The query file the Neo4j adapter runs: the `.neo4j.cypher` variant where there is one. */
function query(name) {
  const dialect = path.join(ROOT, 'cypher', `${name}.neo4j.cypher`);
  return fs.readFileSync(
    fs.existsSync(dialect) ? dialect : path.join(ROOT, 'cypher', `${name}.cypher`),
    'utf8',
  );
}

function inputs() {
  const file = fs.readdirSync(datasetDir).find((f) => f.startsWith('_bench_inputs_'));
  if (!file) throw new Error(`no sampled inputs in ${datasetDir}: run bench/run.mjs first`);
  const sampled = JSON.parse(fs.readFileSync(path.join(datasetDir, file), 'utf8'));
  const rootsFile = path.join(datasetDir, '_tierview_roots.json');
  const hub = fs.existsSync(rootsFile)
    ? JSON.parse(fs.readFileSync(rootsFile, 'utf8'))[0].vid
    : sampled.vids[0];
  return { vid: sampled.vids[0], edgeId: sampled.edge_ids[0], hub };
}

function operators(plan, depth = 0, out = []) {
  const a = plan.arguments ?? {};
  out.push(
    `${'  '.repeat(depth)}${plan.operatorType}  rows ${plan.rows}  db hits ${plan.dbHits}` +
      (a.Details ? `  ${String(a.Details).slice(0, 140)}` : ''),
  );
  for (const child of plan.children ?? []) operators(child, depth + 1, out);
  return out;
}

async function main() {
  const { vid, edgeId, hub } = inputs();
  const from = neo4j.types.DateTime.fromStandardDate(new Date('2015-01-01T00:00:00Z'));
  const cases = [
    ['company/get-profile', { vid }],
    ['edge/get', { edge_id: edgeId }],
    [
      'relationship/list-suppliers',
      {
        vid: hub,
        min_confidence: 0,
        any_date: true,
        evidence_from: from,
        skip: neo4j.int(0),
        limit: neo4j.int(10),
      },
    ],
    ['tierview/step-suppliers', { vids: [hub], evidence_from: from }],
  ];
  const driver = neo4j.driver(uri, neo4j.auth.basic('neo4j', 'neo4j'));
  const session = driver.session({ database: 'neo4j', defaultAccessMode: neo4j.session.READ });
  try {
    for (const [name, params] of cases) {
      const text = query(name);
      const profiled = await session.run(`PROFILE ${text}`, params);
      const warm = performance.now();
      const result = await session.run(text, params);
      const ms = performance.now() - warm;
      const summary = profiled.summary;
      console.log(`\n== ${name}  (${result.records.length} rows, warm run ${ms.toFixed(1)} ms)`);
      console.log(operators(summary.profile).join('\n'));
    }
  } finally {
    await session.close();
    await driver.close();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The servers `.ci/services.sh` starts, by the names its "starting ..." messages give them. */
function servicesStarted(script: string): string[] {
  return [...script.matchAll(/say "starting ([A-Za-z][\w-]*)/g)].map((m) => m[1]!);
}

describe('docs/architecture.md', () => {
  it('names, in its row for .ci/, every server .ci/services.sh starts, and only those', () => {
    const started = servicesStarted(read('.ci/services.sh'));
    expect(started).toEqual(['PostgreSQL', 'Redis', 'Neo4j', 'mongo-java-server', 'fake-gcs-server']);
    const row = read('docs/architecture.md')
      .split('\n')
      .find((line) => line.startsWith('| `.ci/`'));
    expect(row).toBeDefined();
    const named = /\(([^)]*)\)/.exec(row!)?.[1] ?? '';
    for (const name of started) expect(named).toContain(name);
    // A server that CI no longer starts must not be named as one it does.
    expect(named).not.toMatch(/FerretDB/);
  });
});

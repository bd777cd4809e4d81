import type { CypherQuery } from '../../src/store/cypher-files';

/** A query's text without its comment lines (the header that declares its parameters). */
export function queryBody(q: CypherQuery): string {
  return q.text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n');
}

/** The `$name` parameters a query's text uses, sorted. */
export function usedParams(q: CypherQuery): string[] {
  return [...new Set([...queryBody(q).matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))].sort();
}

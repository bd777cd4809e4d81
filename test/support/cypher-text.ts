import { bindLiterals } from '../../src/store/cypher-files';
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

/** The query as it is sent: literal slots (path bounds, dates) filled with valid sample values. */
export function asSent(q: CypherQuery): CypherQuery {
  if (q.literals.size === 0) return q;
  return bindLiterals(
    q,
    Object.fromEntries([...q.literals].map(([k, t]) => [k, t === 'INT' ? 2 : '2020-01-01'])),
  );
}

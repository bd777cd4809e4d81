/**
 * The one place where a statement written for the embedded engine is turned into
 * Neo4j's dialect (seed files only; queries keep a `.neo4j.cypher` variant instead).
 * The embedded engine spells a timestamp literal `timestamp('2021-03-04T00:00:00Z')`,
 * where Neo4j's `timestamp()` takes no argument and the same value is
 * `datetime('2021-03-04T00:00:00Z')`. Text inside other string literals is left alone.
 */
export function toNeo4jDialect(statement: string): string {
  let out = '';
  let i = 0;
  while (i < statement.length) {
    const ch = statement[i]!;
    if (ch === "'" || ch === '"') {
      const end = stringEnd(statement, i);
      out += statement.slice(i, end);
      i = end;
      continue;
    }
    const m = /^timestamp\(\s*'/i.exec(statement.slice(i, i + 16));
    const before = i === 0 ? '' : statement[i - 1]!;
    if (m && !/[A-Za-z0-9_.$]/.test(before)) {
      out += 'datetime(';
      i += 'timestamp('.length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** Index just past the string literal that starts at `start` (backslash escapes honoured). */
function stringEnd(s: string, start: number): number {
  const quote = s[start];
  let i = start + 1;
  while (i < s.length) {
    if (s[i] === '\\') i += 2;
    else if (s[i] === quote) return i + 1;
    else i++;
  }
  return s.length;
}

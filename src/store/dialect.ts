import { TABLES, decodeTextElement } from './tables';

/**
 * Properties that hold lists of strings. The embedded schema keeps them as the
 * staged list literal `[a,b]` in a STRING column; Neo4j stores real lists, so that
 * users' own Cypher (`'x' IN c.domains`) works there. The mappers read both forms.
 */
export const LIST_PROPERTIES: ReadonlySet<string> = new Set(
  Object.values(TABLES).flatMap((t) =>
    t.columns.filter(([, type]) => type === 'STRING[]' || type === 'TEXT[]').map(([name]) => name),
  ),
);

/** List properties whose staged elements are percent-encoded (TEXT[], see tables.ts). */
export const TEXT_LIST_PROPERTIES: ReadonlySet<string> = new Set(
  Object.values(TABLES).flatMap((t) =>
    t.columns.filter(([, type]) => type === 'TEXT[]').map(([name]) => name),
  ),
);

/** A staged TEXT[] literal as the list of texts it encodes. */
export function neo4jTextList(staged: string): string[] {
  return neo4jList(staged).map(decodeTextElement);
}

/** A Cypher string literal of any text. */
function cypherString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * A staged list literal (`[a,b]`, `[]` for none) as the list Neo4j stores. Elements
 * never hold commas or brackets (the staging contract), so splitting is exact.
 */
export function neo4jList(staged: string): string[] {
  if (!staged.startsWith('[') || !staged.endsWith(']'))
    throw new Error(`not a staged list literal: ${JSON.stringify(staged)}`);
  return staged.length === 2 ? [] : staged.slice(1, -1).split(',');
}

/**
 * The one place where a statement written for the embedded engine is turned into
 * Neo4j's dialect (seed files only; queries keep a `.neo4j.cypher` variant instead).
 * - The embedded engine spells a timestamp literal `timestamp('2021-03-04T00:00:00Z')`,
 *   where Neo4j's `timestamp()` takes no argument and the same value is
 *   `datetime('2021-03-04T00:00:00Z')`.
 * - A list property (LIST_PROPERTIES) written as its text literal, `domains: '[a,b]'`
 *   or `c.domains = '[a,b]'`, becomes the list `['a', 'b']` (TEXT[] elements decoded).
 * Text inside other string literals is left alone.
 */
export function toNeo4jDialect(statement: string): string {
  let out = '';
  let i = 0;
  while (i < statement.length) {
    const ch = statement[i]!;
    if (ch === "'" || ch === '"') {
      const end = stringEnd(statement, i);
      const literal = statement.slice(i, end);
      const key = /([A-Za-z_][A-Za-z0-9_]*)\s*[:=]\s*$/.exec(out)?.[1];
      const text = literal.slice(1, -1);
      if (key !== undefined && LIST_PROPERTIES.has(key) && /^\[[^'"\\[\]]*\]$/.test(text)) {
        const items = TEXT_LIST_PROPERTIES.has(key) ? neo4jTextList(text) : neo4jList(text);
        out += `[${items.map(cypherString).join(', ')}]`;
      } else {
        out += literal;
      }
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

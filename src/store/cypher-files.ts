import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from '../paths';
import { isDate } from './mappers';

/** The declared type of one query parameter, from the file's header. */
export type ParamType = 'STRING' | 'STRING[]' | 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP' | 'MAP[]';

export interface CypherQuery {
  /** `<domain>/<query>`, e.g. `company/get-profile`; also the transaction label. */
  name: string;
  text: string;
  /** Parameters declared in the header: `// $vid: STRING`. */
  params: ReadonlyMap<string, ParamType>;
  /** The file it came from (a `.embedded.cypher` or `.neo4j.cypher` variant when one exists). */
  file: string;
  /** Literal slots declared in the header (`// {{max_tier}}: INT`); see `bindLiterals`. */
  literals: ReadonlyMap<string, LiteralType>;
  /** Set on a query whose literals are bound: its text varies per call, so it is compiled per call. */
  bound?: true;
}

/**
 * Values Cypher will not take as parameters: variable-length bounds on both
 * engines, and (on the embedded engine) any value inside a recursive
 * relationship's filter. They are spliced into the text only after validation:
 * INT is a small non-negative integer, DATE a real calendar day `YYYY-MM-DD`, BOOLEAN true or false.
 */
export type LiteralType = 'INT' | 'DATE' | 'BOOLEAN';

const LITERAL_LINE = /^\s*\/\/\s*\{\{([a-z_]+)\}\}\s*:\s*(INT|DATE|BOOLEAN)(?=\s|$)/;

const PARAM_LINE =
  /^\s*\/\/\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(STRING\[\]|STRING|INT64|DOUBLE|BOOLEAN|TIMESTAMP|MAP\[\])(?=\s|$)/;

/** A bad call of a query: wrong, missing or undeclared parameters. A programming error. */
export class QueryParameterError extends Error {
  constructor(query: string, detail: string) {
    super(`query ${query}: ${detail}`);
    this.name = 'QueryParameterError';
  }
}

/**
 * Checks call parameters against the query's header, for every engine: each
 * declared parameter is given with a value of its type, and nothing else is.
 */
export function checkParams(
  query: Pick<CypherQuery, 'name' | 'params'>,
  params: Record<string, unknown>,
): void {
  for (const key of Object.keys(params)) {
    if (!query.params.has(key)) throw new QueryParameterError(query.name, `undeclared parameter $${key}`);
  }
  for (const [key, type] of query.params) {
    const value = params[key];
    const fail = (what: string) => new QueryParameterError(query.name, `$${key} must be ${what}`);
    if (value === undefined) throw new QueryParameterError(query.name, `missing parameter $${key}`);
    switch (type) {
      case 'STRING':
        if (typeof value !== 'string') throw fail('a string');
        break;
      case 'INT64':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw fail('a safe integer');
        break;
      case 'DOUBLE':
        if (typeof value !== 'number' || !Number.isFinite(value)) throw fail('a finite number');
        break;
      case 'BOOLEAN':
        if (typeof value !== 'boolean') throw fail('a boolean');
        break;
      case 'TIMESTAMP':
        if (!isDate(value) || Number.isNaN(value.getTime())) throw fail('a valid Date');
        break;
      case 'STRING[]':
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
          throw fail('an array of strings');
        break;
      case 'MAP[]':
        if (
          !Array.isArray(value) ||
          !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
        )
          throw fail('an array of objects');
        break;
    }
  }
}

/** The `cypher/` directory. */
export function cypherRoot(): string {
  return projectDir('cypher', 'schema');
}

/** Splits a script into statements on `;` at line ends, dropping `//` comment lines. */
export function splitStatements(script: string): string[] {
  const body = script
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  return body
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Parses a query file's header into its literal slots. */
export function parseLiterals(text: string): Map<string, LiteralType> {
  const literals = new Map<string, LiteralType>();
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('//')) break;
    const m = LITERAL_LINE.exec(line);
    if (m) literals.set(m[1]!, m[2] as LiteralType);
  }
  return literals;
}

function literalText(name: string, type: LiteralType, value: unknown): string {
  if (type === 'BOOLEAN') {
    if (typeof value !== 'boolean')
      throw new Error(`literal ${name} must be true or false, got ${String(value)}`);
    return String(value);
  }
  if (type === 'INT') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > 1000)
      throw new Error(`literal ${name} must be an integer from 0 to 1000, got ${String(value)}`);
    return String(value);
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value))
    throw new Error(`literal ${name} must be a date YYYY-MM-DD, got ${String(value)}`);
  const d = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value)
    throw new Error(`literal ${name} is not a calendar day: ${value}`);
  return value;
}

/**
 * The query with every declared `{{slot}}` replaced by its validated value. The
 * result has no slots left, so the connection pool does not cache it by name.
 */
export function bindLiterals(query: CypherQuery, values: Record<string, unknown>): CypherQuery {
  let text = query.text;
  for (const [name, type] of query.literals) {
    if (!(name in values)) throw new Error(`query ${query.name} needs literal ${name}`);
    text = text.split(`{{${name}}}`).join(literalText(name, type, values[name]));
  }
  for (const name of Object.keys(values)) {
    if (!query.literals.has(name)) throw new Error(`query ${query.name} declares no literal ${name}`);
  }
  // Header lines keep their slot names; only the body must be free of them.
  const body = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n');
  if (/\{\{[a-z_]+\}\}/.test(body)) throw new Error(`query ${query.name} has an undeclared literal slot`);
  return { ...query, text, literals: new Map(), bound: true };
}

/** Parses a query file's header into its parameter declarations. */
export function parseHeader(text: string): Map<string, ParamType> {
  const params = new Map<string, ParamType>();
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('//')) break;
    const m = PARAM_LINE.exec(line);
    if (m) params.set(m[1]!, m[2] as ParamType);
  }
  return params;
}

/**
 * Loads `cypher/<name>.cypher`, preferring the engine's variant
 * `cypher/<name>.<engine>.cypher` where the dialects differ.
 */
export function loadQuery(name: string, engine: 'embedded' | 'neo4j', root = cypherRoot()): CypherQuery {
  const variant = path.join(root, `${name}.${engine}.cypher`);
  const plain = path.join(root, `${name}.cypher`);
  const file = fs.existsSync(variant) ? variant : plain;
  const text = fs.readFileSync(file, 'utf8');
  return { name, text, params: parseHeader(text), file, literals: parseLiterals(text) };
}

/** Every query name under `cypher/` (without engine variants and schema scripts). */
export function listQueryNames(root = cypherRoot()): string[] {
  const names: string[] = [];
  for (const domain of fs.readdirSync(root)) {
    const dir = path.join(root, domain);
    if (domain === 'schema' || !fs.statSync(dir).isDirectory()) continue;
    for (const f of fs.readdirSync(dir)) {
      const m = /^([a-z0-9-]+)\.cypher$/.exec(f);
      if (m) names.push(`${domain}/${m[1]}`);
    }
  }
  return names.sort();
}

import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from '../paths';

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
}

const PARAM_LINE =
  /^\s*\/\/\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(STRING\[\]|STRING|INT64|DOUBLE|BOOLEAN|TIMESTAMP|MAP\[\])(?=\s|$)/;

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
  return { name, text, params: parseHeader(text), file };
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

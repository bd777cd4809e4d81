import { badRequest } from '../domain/errors';
import type { FieldError } from '../domain/errors';
import { hasControlCharacter } from '../domain/params';

export type ParamKind = 'string' | 'int' | 'number' | 'boolean';

/**
 * Reads query-string parameters by declared kind. Unknown and repeated
 * parameters and unparsable values are refused with one 400 naming every
 * problem; range rules are the services' (shared with GraphQL).
 */
export function parseQuery(
  query: Record<string, unknown>,
  spec: Record<string, ParamKind>,
): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  const errors: FieldError[] = [];
  for (const [key, raw] of Object.entries(query)) {
    // Own names only: `__proto__` or `toString` is an unknown parameter like any other.
    const kind = Object.hasOwn(spec, key) ? spec[key] : undefined;
    const field = `query.${key}`;
    if (!kind) {
      const accepted = Object.keys(spec);
      errors.push({
        field,
        reason:
          accepted.length > 0
            ? `unknown parameter; accepted: ${accepted.join(', ')}`
            : 'this route takes no query parameters',
      });
      continue;
    }
    if (typeof raw !== 'string') {
      errors.push({ field, reason: 'given more than once' });
      continue;
    }
    const value = parseValue(raw, kind);
    if (value === undefined) errors.push({ field, reason: describe(kind, raw) });
    else out[key] = value;
  }
  if (errors.length > 0) throw badRequest(errors);
  return out;
}

function parseValue(raw: string, kind: ParamKind): string | number | boolean | undefined {
  switch (kind) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^-?\d{1,15}$/.test(raw)) return undefined;
      const n = Number(raw);
      return n >= INT_MIN && n <= INT_MAX ? n : undefined;
    }
    case 'number': {
      if (!/^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(raw)) return undefined;
      const n = Number(raw);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'boolean': {
      const v = raw.toLowerCase();
      if (v === 'true' || v === '1' || v === 'yes') return true;
      if (v === 'false' || v === '0' || v === 'no') return false;
      return undefined;
    }
  }
}

/** GraphQL's Int: the operations behind the routes take nothing wider. */
const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** Why `raw` is not a value of `kind`. A route's own range ("at most 100") is its service's to say. */
function describe(kind: ParamKind, raw: string): string {
  switch (kind) {
    case 'int':
      return /^-?\d+$/.test(raw) ? `is out of range (${INT_MIN} to ${INT_MAX})` : 'must be an integer';
    case 'number':
      return 'must be a number';
    case 'boolean':
      return 'must be true or false';
    default:
      return 'invalid value';
  }
}

/** Path segments: non-empty, bounded, printable. */
export function checkPathId(name: string, value: string): string {
  // Characters are counted as code points, as JSON Schema's maxLength counts them.
  const length = [...value].length;
  if (length === 0 || length > 200 || hasControlCharacter(value)) {
    throw badRequest([{ field: `path.${name}`, reason: 'must be 1 to 200 printable characters' }]);
  }
  return value;
}

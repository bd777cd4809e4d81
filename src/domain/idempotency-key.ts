import { badRequest } from './errors';

/** The longest idempotency key accepted: room for any UUID, ULID or hash a client may use. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const KEY = /^[\x21-\x7e]+$/;

/**
 * A client's name for one request (the `Idempotency-Key` of a start), checked: 1 to
 * MAX_IDEMPOTENCY_KEY_LENGTH visible ASCII characters, compared exactly. `field` names where it came
 * from in the error (`header.Idempotency-Key`, `idempotency_key`).
 */
export function checkIdempotencyKey(key: string, field: string): string {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY.test(key)) {
    throw badRequest([
      {
        field,
        reason: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (a UUID, for example)`,
      },
    ]);
  }
  return key;
}

/**
 * The `Idempotency-Key` header's value as a key: the header is a structured-field string, so a value
 * in double quotes stands for the text between them (`"abc"` and `abc` name one key). Undefined when
 * the header is absent.
 */
export function idempotencyKeyHeader(
  value: string | string[] | undefined,
  field: string,
): string | undefined {
  if (value === undefined) return undefined;
  // Node joins repeated headers it does not know with ", "; two keys are one too many.
  const text = (Array.isArray(value) ? value.join(', ') : value).trim();
  const quoted = /^"(.*)"$/.exec(text);
  return checkIdempotencyKey(quoted ? quoted[1]! : text, field);
}

/**
 * JSON with every object's keys in code-point order, so that two values equal as data give the same
 * text whatever order their keys were written or stored in (PostgreSQL's jsonb reorders them).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

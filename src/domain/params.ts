import { z } from 'zod';
import { badRequest } from './errors';
import type { FieldError } from './errors';

/**
 * Input rules shared by REST (query strings, parsed from text) and GraphQL
 * (typed arguments), so both interfaces accept and refuse the same values.
 */
export interface Limits {
  maxPageSize: number;
  maxOffset: number;
}

/** A real calendar date written YYYY-MM-DD (2023-02-30 is refused). */
export const isoDate = z.string().refine((s) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
}, 'must be a real date written YYYY-MM-DD');

/**
 * A page asked for without `limit` or `offset`. The one place these are set:
 * REST, GraphQL resolvers, the job list and the OpenAPI document read them
 * here, and the SDL defaults in schema/*.graphql are tested against them.
 */
export const PAGE_DEFAULTS = { limit: 10, offset: 0 } as const;

export function pageSchema(limits: Limits) {
  return {
    limit: z
      .number()
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(limits.maxPageSize, `must be at most ${limits.maxPageSize}`),
    offset: z
      .number()
      .int('must be an integer')
      .min(0, 'must be 0 or more')
      .max(limits.maxOffset, `must be at most ${limits.maxOffset}`),
  };
}

/** `pageSchema` with PAGE_DEFAULTS filled in for a missing `limit` or `offset`. */
export function pageWithDefaults(limits: Limits) {
  const page = pageSchema(limits);
  return {
    limit: page.limit.default(PAGE_DEFAULTS.limit),
    offset: page.offset.default(PAGE_DEFAULTS.offset),
  };
}

/**
 * Text a caller types (a name searched for, a vid): 1 to 200 characters once trimmed, counted in
 * code points (zod 4 counts them, as JSON Schema's maxLength does), none of them a control character
 * (no name or id holds one; REST path ids refuse them too). A refusal reads `field: reason`.
 */
export const shortText = z
  .string()
  .trim()
  .refine((text) => !hasControlCharacter(text), { message: 'must not hold control characters', abort: true })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');

export const confidence = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');

/** Runs a zod schema and turns its issues into one 400 naming every bad field. */
export function check<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const errors: FieldError[] = r.error.issues.map((i) => ({
    field: `${prefix}${i.path.join('.') || '(value)'}`,
    reason: i.message,
  }));
  throw badRequest(errors);
}

/**
 * "Only relationships supported by evidence later than this date": the day
 * itself is not later than the date, so the bound is the next day's start (UTC).
 */
export function evidenceAfter(date: string | null | undefined): Date | null {
  if (!date) return null;
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d;
}

/** Whether `value` holds a C0 control character or DEL. */
export function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

import type { Request } from 'express';
import { isAppError, withFieldsRenamed } from '../domain/errors';
import type { AppError } from '../domain/errors';
import { isJsonObject } from './request-body';

/**
 * Services and the domain name a refused field as the GraphQL argument (`num_tiers`, `run_id`); a
 * REST caller sees where it sent it: `path.run_id`, `body.num_tiers`, `query.limit`. A field named
 * with its place already (`query.limit` from parseQuery) is left as it is.
 */
export function restFieldNames(e: AppError, req: Request): AppError {
  const body: unknown = req.body;
  // A request that sent a JSON object: its fields, those it left out included, are the body's.
  // Own properties only: `constructor` or `__proto__` sent in a body is no path parameter.
  const inBody = (field: string) =>
    isJsonObject(body) && (Object.hasOwn(body, field) || req.method === 'POST');
  const where = (field: string) =>
    Object.hasOwn(req.params, field) ? `path.${field}` : inBody(field) ? `body.${field}` : `query.${field}`;
  return withFieldsRenamed(e, (field) => (field.includes('.') ? field : where(field)));
}

/** Runs `work` (a parse, an operation) with the fields of a refusal it throws named for REST. */
export async function withRestFieldNames<T>(req: Request, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw isAppError(e) ? restFieldNames(e, req) : e;
  }
}

import { AppError, isAppError } from '../domain/errors';

/**
 * The domain's checks name a refused field as the REST adapter shows it (`body.num_tiers`,
 * `path.run_id`); a GraphQL caller sent arguments, so the same error names them bare
 * (`num_tiers`, `run_id`). Runs `resolve` and renames the fields of a refusal it throws.
 */
export async function withArgumentNames<T>(resolve: () => T | Promise<T>): Promise<T> {
  try {
    return await resolve();
  } catch (e) {
    if (!isAppError(e) || e.fieldErrors.length === 0) throw e;
    const errors = e.fieldErrors.map((f) => ({ ...f, field: f.field.replace(/^(body|path|query)\./, '') }));
    throw new AppError(
      e.code,
      errors.map((f) => `${f.field}: ${f.reason}`).join('; '),
      errors,
      e.retryAfterS,
    );
  }
}

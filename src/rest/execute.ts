import { execute, Kind } from 'graphql';
import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { CompiledQuery } from 'graphql-jit';
import { AppError, badRequest, ERROR_CODES, isAppError } from '../domain/errors';
import type { ErrorCode } from '../domain/errors';
import type { GraphQLContext } from '../graphql/context';

/**
 * Runs a pre-parsed operation against the schema, in process (no HTTP, no
 * re-parsing or validation: the documents are ours and checked by a test).
 * Returns `data`, or throws the first error as the AppError it came from.
 */
export async function runOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  context: GraphQLContext,
): Promise<Record<string, unknown>> {
  let result = await compiledOperation(schema, document).query(undefined, context, variables);
  // Variables that do not fit: graphql-js says which variable and keeps the scalar's own error,
  // the compiled operation only a message, so the (rare) refusal is worked out by graphql-js.
  if (result.errors?.length && !('data' in result))
    result = await execute({ schema, document, variableValues: variables, contextValue: context });
  const first = result.errors?.[0];
  // Without `data` execution never started: the variables, which come from the request, did not fit the operation.
  if (first && !('data' in result)) throw variableErrors(result.errors ?? []);
  if (first) {
    const original = first.originalError;
    const app = findAppError(first);
    if (app) throw app;
    const code = first.extensions?.code;
    if (typeof code === 'string' && code in ERROR_CODES && !original) {
      throw new AppError(code as ErrorCode, first.message);
    }
    throw original ?? first;
  }
  return result.data as Record<string, unknown>;
}

const compiled = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, CompiledQuery>>();

/**
 * The operation compiled for the schema, once: a compiled operation runs the same resolvers
 * without graphql-js walking the selection set again for every object of every request
 * (a list page is some two hundred fields).
 */
function compiledOperation(schema: GraphQLSchema, document: DocumentNode): CompiledQuery {
  let bySchema = compiled.get(schema);
  if (!bySchema) compiled.set(schema, (bySchema = new WeakMap()));
  let query = bySchema.get(document);
  if (!query) {
    const made: CompiledQuery | ExecutionResult = compileQuery(schema, document);
    if (!isCompiledQuery(made))
      throw new Error(`REST operation does not compile: ${made.errors?.map((e) => e.message).join('; ')}`);
    bySchema.set(document, (query = made));
  }
  return query;
}

function variableErrors(errors: readonly GraphQLError[]): AppError {
  const app = errors.map((e) => findAppError(e)).find((e) => e !== null);
  if (app) return app;
  return badRequest(
    errors.map((e) => {
      const node = e.nodes?.[0];
      const field = node?.kind === Kind.VARIABLE_DEFINITION ? node.variable.name.value : '(request)';
      return { field, reason: e.originalError?.message ?? e.message };
    }),
  );
}

/** graphql-js wraps errors thrown while coercing variables more than once; find ours underneath. */
export function findAppError(error: unknown): AppError | null {
  let e: unknown = error;
  for (let depth = 0; e && depth < 5; depth++) {
    if (isAppError(e)) return e;
    e = (e as { originalError?: unknown }).originalError;
  }
  return null;
}

import { parse } from 'graphql';
import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import type { Request, RequestHandler } from 'express';
import { unknownOperationTypes } from '../graphql/known-operation-types';
import { checkLimits } from '../graphql/limits';
import type { QueryLimits } from '../graphql/limits';

/**
 * Checks a GraphQL document's size, operation type, depth and cost before
 * Apollo sees it, within a time budget. Apollo's validation cannot be stopped
 * midway (an exception there is a 500) and would walk a refused document with
 * every graphql-js rule first: here a refusal costs no more than measuring.
 */
export function graphqlAdmission(
  schema: GraphQLSchema,
  limits: QueryLimits & { maxTokens: number },
): RequestHandler {
  return (req, res, next) => {
    const query = queryText(req);
    if (query === null) {
      next();
      return;
    }
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: limits.maxTokens });
    } catch {
      // Apollo parses with the same token limit and reports syntax errors in its usual form.
      next();
      return;
    }
    const wrongType = unknownOperationTypes(schema, document);
    const errors: GraphQLError[] = wrongType.length > 0 ? wrongType : checkLimits(schema, document, limits);
    if (errors.length === 0) {
      next();
      return;
    }
    res.status(400).json({
      errors: errors.map((e) => ({
        message: e.message,
        ...(e.locations ? { locations: e.locations } : {}),
        extensions: {
          code: typeof e.extensions.code === 'string' ? e.extensions.code : 'GRAPHQL_VALIDATION_FAILED',
        },
      })),
    });
  };
}

/** The document of a GraphQL-over-HTTP request, GET or POST; null for anything else (Apollo answers it). */
function queryText(req: Request): string | null {
  const body: unknown = req.body;
  if (req.method === 'POST' && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const q = (body as { query?: unknown }).query;
    return typeof q === 'string' ? q : null;
  }
  if (req.method === 'GET') {
    const q = req.query.query;
    return typeof q === 'string' ? q : null;
  }
  return null;
}

import { GraphQLScalarType, Kind } from 'graphql';
import { badRequest } from '../domain/errors';
import { isoDate } from '../domain/params';

/**
 * The field a Date scalar's refusal names: a scalar does not know its argument, which GraphQL's
 * error formatting puts in its place where the document shows it (the lists' `date` is this name).
 */
export const SCALAR_FIELD = 'date';

/** Thrown as an AppError so REST and GraphQL both answer BAD_REQUEST naming the field. */
function parseDate(value: unknown): string {
  if (typeof value !== 'string' || !isoDate.safeParse(value).success) {
    throw badRequest([{ field: SCALAR_FIELD, reason: 'must be a real date written YYYY-MM-DD' }]);
  }
  return value;
}

/** YYYY-MM-DD, checked to be a real calendar date. */
export const DateScalar = new GraphQLScalarType({
  name: 'Date',
  serialize: (v) => v,
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

/** ISO 8601 instants; the store already hands them out as strings. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (v) => (v instanceof Date ? v.toISOString() : v),
  parseValue: (v) => v,
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? ast.value : null),
});

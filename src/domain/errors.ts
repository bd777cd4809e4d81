/**
 * The one list of expected failures. Each code has its HTTP status (REST answers
 * RFC 9457 problem+json with it) and is the GraphQL `extensions.code`.
 */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400, title: 'Invalid request' },
  UNAUTHENTICATED: { status: 401, title: 'API key missing' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request not received in time' },
  GONE: { status: 410, title: 'Gone' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range not satisfiable' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request headers too large' },
  QUERY_TOO_COMPLEX: { status: 400, title: 'Query too complex' },
  PATHS_TOO_BROAD: { status: 422, title: 'Too many connections to search' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key used for another request' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  TOO_MANY_RUNS: { status: 429, title: 'Too many runs pending or running' },
  INTERNAL: { status: 500, title: 'Internal error' },
  UNAVAILABLE: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Codes only GraphQL answers with, set by the GraphQL server for requests it
 * cannot run; listed here so that the docs and the error formatter agree.
 */
export const GRAPHQL_REQUEST_CODES = {
  GRAPHQL_PARSE_FAILED:
    'The document is not valid GraphQL, or longer than GRAPHQL_MAX_TOKENS tokens (HTTP 400).',
  GRAPHQL_VALIDATION_FAILED:
    'The document does not fit the schema; subscriptions, which this service does not offer, included (HTTP 400).',
  BAD_USER_INPUT: 'A variable does not fit its declared type (HTTP 400).',
  PERSISTED_QUERY_NOT_FOUND:
    'The hash of an automatic persisted query is not known yet: send the query with it (HTTP 200, as the protocol asks).',
  PERSISTED_QUERY_NOT_SUPPORTED: 'Persisted queries are off on this server (HTTP 200, as the protocol asks).',
  OPERATION_RESOLUTION_FAILURE: 'operationName names no operation of the document (HTTP 400).',
} as const;

/** One field-level problem, as in the `errors` member of a problem document. */
export interface FieldError {
  /** Where the bad value was: `query.limit`, `path.vid`, `body.num_tiers`. */
  field: string;
  reason: string;
}

/** An expected failure with a code from ERROR_CODES. Anything else is a 500. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    /** Seconds after which the request may succeed (Retry-After), for a failure that passes. */
    readonly retryAfterS?: number,
  ) {
    // A client's mistake (4xx) is answered, never logged with its stack, so none is captured: the
    // capture walked every frame of the request's middleware chain, a few microseconds per refusal.
    const limit = Error.stackTraceLimit;
    if (ERROR_CODES[code].status < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/** Longest id a message repeats whole; a longer one is cut (GraphQL arguments have no length limit). */
const ECHOED_ID = 200;

export function notFound(what: string, id: string): AppError {
  const chars = [...id];
  const shown = chars.length > ECHOED_ID ? `${chars.slice(0, ECHOED_ID).join('')}…` : id;
  return new AppError('NOT_FOUND', `No ${what} with id '${shown}'.`);
}

/** The detail of a refusal of fields: `field: reason`, each in turn. */
function fieldsDetail(fieldErrors: readonly FieldError[]): string {
  return fieldErrors.map((e) => `${e.field}: ${e.reason}`).join('; ');
}

/**
 * The same refusal with its fields named otherwise (where a REST caller sent them, the argument a
 * scalar was given for), its detail written again from them.
 */
export function withFieldsRenamed(e: AppError, rename: (field: string) => string): AppError {
  if (e.fieldErrors.length === 0) return e;
  const errors = e.fieldErrors.map((f) => ({ ...f, field: rename(f.field) }));
  return new AppError(e.code, fieldsDetail(errors), errors, e.retryAfterS);
}

export function badRequest(fieldErrors: FieldError[]): AppError {
  const detail = fieldsDetail(fieldErrors);
  return new AppError('BAD_REQUEST', detail, fieldErrors);
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

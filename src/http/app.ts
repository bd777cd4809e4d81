import crypto from 'node:crypto';
import zlib from 'node:zlib';
import compression from 'compression';
import { ApolloServer } from '@apollo/server';
import { GraphQLError, Kind } from 'graphql';
import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { Express, Request, RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import type { GraphQLSchema } from 'graphql';
import {
  AppError,
  ERROR_CODES,
  GRAPHQL_REQUEST_CODES,
  isAppError,
  withFieldsRenamed,
} from '../domain/errors';
import { logAtMostEvery } from '../logger';
import type { Logger } from '../logger';
import type { DerivedState } from '../store/derived-state';
import { createContext } from '../graphql/context';
import type { GraphQLContext, Services } from '../graphql/context';
import { knownOperationTypesRule } from '../graphql/known-operation-types';
import { SCALAR_FIELD } from '../graphql/scalars';
import { queryLimitRule } from '../graphql/limits';
import type { QueryLimits } from '../graphql/limits';
import { companiesRoutes } from '../rest/companies.routes';
import { pathsRoutes } from '../rest/paths.routes';
import { edgesRoutes } from '../rest/edges.routes';
import { clustersRoutes } from '../rest/clusters.routes';
import { jobsRoutes } from '../rest/jobs.routes';
import { findAppError, runOperation } from '../rest/execute';
import { openApiDocument } from '../rest/openapi';
import { compressWhenAccepted, compressWholeBodies } from './whole-body-compression';
import type { ApiFacts } from '../rest/openapi';
import type { RestDeps } from '../rest/rest-deps';
import type { ApiKeyStore } from './api-keys';
import { requireApiKey } from './auth';
import { AuthFailureLimiter } from './auth-failures';
import type { AuthFailureLimitOptions } from './auth-failures';
import { docsPage, docsStatic } from './docs-page';
import { explorerPage } from './explorer';
import { graphqlAdmission } from './graphql-admission';
import { methodNotAllowed } from './method-not-allowed';
import { webAppRoutes } from './web-app';
import { apiAnswerHeaders, APP_PAGE_POLICY } from './security-headers';
import { conditionalReads } from './conditional';
import type { Reach } from './dependencies';
import { keyRateLimit } from './key-rate-limit';
import { cors } from './cors';
import { bodyTooLarge, errorHandler, sendNoRoute, sendProblem } from './problem';
import { withRestFieldNames } from '../rest/field-names';
import { RouteTable } from '../rest/route-table';
import { requestOrigin } from '../rest/links';
import { dispatchUnder } from './dispatch-under';

declare module 'express-serve-static-core' {
  interface Request {
    id?: string;
  }
}

export interface AppOptions {
  schema: GraphQLSchema;
  services: Services;
  keys: ApiKeyStore;
  log: Logger;
  keyHeader: string;
  /** `store`: shared counters (Redis) for several instances; unset: this process's memory. */
  rateLimit: { max: number; windowS: number; store?: Store };
  /** Failed authentications per client address; `store` as for `rateLimit`. */
  authFailures: AuthFailureLimitOptions;
  graphqlLimits: QueryLimits & { maxTokens: number };
  publicUrl?: string;
  trustProxy: number;
  /** Answers below this size are not compressed (see COMPRESS_MIN_BYTES). */
  compressMinBytes: number;
  /** Whether the store and search index can answer (readiness). */
  ready: () => boolean;
  /** The services answers depend on outside this process, and whether they answer now (readiness too). */
  dependencies?: () => Promise<Record<string, Reach>>;
  /**
   * What the server derives from the graph in the background and where each stands (`/readyz`
   * shows it): answers are the same either way, only slower until it is `ready`.
   */
  derived?: () => Record<string, DerivedState>;
  /** Routers mounted before authentication (signed download links). */
  open?: express.Router[];
  /** Origins whose pages may call the API from another origin (none when empty or unset). */
  corsOrigins?: string[];
  /** The settings the OpenAPI document states (the running configuration). */
  apiFacts: ApiFacts;
  /** Changes whenever the data does (store and search index generations): the ETag of reads. */
  dataVersion?: () => string;
}

/** Brotli quality of compressed answers: the default (11) costs too much CPU for an API. */
const BROTLI_QUALITY = 4;

export interface BuiltApp {
  app: Express;
  apollo: ApolloServer<GraphQLContext>;
}

/** Assembles the HTTP surface: REST /v1, GraphQL, explorer, docs, health. */
export async function buildApp(o: AppOptions): Promise<BuiltApp> {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', o.trustProxy);
  app.set('etag', false);

  app.use((req, res, next) => {
    req.id = crypto.randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  });
  // JSON, CSV downloads and the app's files compress well; brotli's default quality (11) costs too much CPU per export.
  app.use(
    compressWhenAccepted(
      compression({
        threshold: o.compressMinBytes,
        brotli: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
      }),
    ),
  );
  // After it, so that answers sent whole are compressed in one call first, at a setting fast enough for
  // the serving thread (see whole-body-compression.ts).
  app.use(compressWholeBodies({ minBytes: o.compressMinBytes, brotliQuality: 1, gzipLevel: 1 }));

  const restHeaders = apiAnswerHeaders('rest');
  const graphqlHeaders = apiAnswerHeaders('graphql');
  if (o.corsOrigins?.length) {
    const allow = cors(o.corsOrigins, o.keyHeader);
    // Their headers first: a preflight is answered here.
    app.use('/v1', restHeaders, allow);
    app.use('/graphql', graphqlHeaders, allow);
  }

  const auth = requireApiKey(o.keys, o.keyHeader, new AuthFailureLimiter(o.authFailures, o.log));
  const storeWarn = logAtMostEvery(60_000, o.log);
  const limiter = keyRateLimit({
    windowS: o.rateLimit.windowS,
    max: o.rateLimit.max,
    ...(o.rateLimit.store ? { store: o.rateLimit.store } : {}),
    onStoreError: (err: unknown) =>
      storeWarn(err, 'shared rate-limit counters unavailable; requests are not limited meanwhile'),
    onWarning: (err) => o.log.warn({ err }, 'rate limits: a setting the counting library warns of'),
    onLimited: (req, res) => {
      sendProblem(
        res,
        new AppError(
          'RATE_LIMITED',
          `Rate limit of ${o.rateLimit.max} requests per ${o.rateLimit.windowS} s exceeded.`,
        ),
        req,
      );
    },
  });

  const deps: RestDeps = {
    run: (document, variables, req: Request) =>
      withRestFieldNames(req, () =>
        runOperation(
          o.schema,
          document,
          variables,
          createContext(o.services, req.keyId ?? null, () => originOf(req)),
        ),
      ),
    publicUrl: o.publicUrl,
    maxOffset: o.apiFacts.MAX_OFFSET,
  };

  const routes = new RouteTable()
    .include(companiesRoutes(deps))
    .include(edgesRoutes(deps))
    .include(clustersRoutes(deps))
    .include(pathsRoutes(deps))
    .include(jobsRoutes(deps, () => o.services.jobs.maxTiers));
  // Before the other routes: every /v1 request is answered here, which costs the rest one comparison.
  app.use(
    dispatchUnder('/v1', routes, [
      restHeaders,
      auth,
      limiter,
      jsonBodies(64 * 1024),
      ...(o.dataVersion ? [conditionalReads(o.dataVersion)] : []),
    ]),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const dependencies = o.dependencies ? await o.dependencies() : {};
    const lost = Object.values(dependencies).includes('unreachable');
    const ready = o.ready() && !lost;
    res.status(ready ? 200 : 503).json({
      // Unreachable wins over starting: it is what an operator must act on.
      status: ready ? 'ready' : lost ? 'unavailable' : 'starting',
      ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}),
      ...(o.derived ? { derived: o.derived() } : {}),
    });
  });
  // Pages and what they load (the app, the explorer, the API reference) and /graphql: none may be
  // framed by another site (clickjacking), sniffed into another type, or name itself in the referrer
  // of a link it opens (evidence links lead to third-party sites). /v1 and the health checks answer
  // above, without them (/v1 with its own, apiAnswerHeaders).
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  const openapi = openApiDocument(o.keyHeader, o.apiFacts);
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  const docs = docsPage(openapi);
  app.get('/docs', (_req, res) => {
    res.type('html').send(docs);
  });
  app.use('/docs/static/', docsStatic());
  const explorer = explorerPage(o.keyHeader, o.apiFacts.MAX_PAGE_SIZE);
  app.get('/explorer', (_req, res) => {
    // Never kept by browsers, so a new build's assets are picked up.
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(explorer);
  });
  for (const r of o.open ?? []) app.use(r);

  const apollo = new ApolloServer<GraphQLContext>({
    schema: o.schema,
    introspection: true,
    // Apollo refuses a GET that a browser could send from another origin without a preflight. Every
    // request here carries the key header (a request without it never reaches Apollo), which no
    // browser sends across origins without one: so a GET with the key is no forgery, and needs
    // none of Apollo's own headers beside it.
    csrfPrevention: { requestHeaders: [o.keyHeader, 'x-apollo-operation-name', 'apollo-require-preflight'] },
    includeStacktraceInErrorResponses: false,
    parseOptions: { maxTokens: o.graphqlLimits.maxTokens },
    // Documents sent as text were checked, within the time budget, by graphqlAdmission; these rules
    // catch a persisted query, which comes out of Apollo's cache, and cannot stop validation midway.
    validationRules: [knownOperationTypesRule, queryLimitRule(o.graphqlLimits)],
    // Cache-Control is set before Apollo (apiAnswerHeaders), on its refusals too; left to itself,
    // Apollo would write over it.
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControl({ calculateHttpHeaders: false }),
    ],
    // The server's close stops Apollo in its turn. Left to itself (outside tests), Apollo would also
    // stop on SIGTERM and SIGINT and then send the signal again, killing the process half-way
    // through that close (a search index being saved, jobs being handed back).
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatGraphQLError(formatted, error, o.log),
  });
  await apollo.start();
  app.use(
    '/graphql',
    graphqlHeaders,
    graphqlMethods,
    auth,
    limiter,
    express.json({ limit: '256kb' }),
    graphqlAdmission(o.schema, o.graphqlLimits),
    expressMiddleware(apollo, {
      context: ({ req }) =>
        Promise.resolve(createContext(o.services, req.keyId ?? null, () => originOf(req))),
    }),
  );
  // The app's pages hold the API key: only this server's scripts and styles run there. The explorer
  // and the API reference, answered above, keep the policy set for every page (GraphiQL and Swagger UI
  // need more).
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', APP_PAGE_POLICY);
    next();
  });
  app.use(webAppRoutes(o.keyHeader));

  app.use(methodNotAllowed(app.router));
  app.use((req, res) => {
    sendNoRoute(res, req);
  });
  app.use(errorHandler(o.log));
  return { app, apollo };
}

/** The address the client used, for download links; none without a Host header (the server's default then). */
const originOf = (req: Request) => (req.get('host') ? requestOrigin(req) : undefined);

/**
 * GraphQL over HTTP takes GET and POST. Any other method is answered here as every route answers a
 * method it does not take (405, Allow, a problem document), before Apollo, which would answer a
 * DELETE without a media type as a CSRF attempt (400) and others in its own format. HEAD and
 * OPTIONS are left to Apollo as before (a CORS preflight from a listed origin is answered earlier).
 */
const graphqlMethods: RequestHandler = (req, res, next) => {
  const m = req.method;
  if (m === 'GET' || m === 'POST' || m === 'HEAD' || m === 'OPTIONS') return next();
  res.setHeader('Allow', 'GET, POST');
  sendProblem(res, new AppError('METHOD_NOT_ALLOWED', `GraphQL takes GET and POST, not ${m}.`), req);
};

/**
 * A body declared larger than this is refused without reading it, and the connection closed: the
 * parser reads a body over its limit to the end before answering 413, however long it streams.
 * Up to this size it still does, so that a client sending an oversized body whole reads the 413
 * rather than a connection reset.
 */
const READ_BEFORE_REFUSING = 1024 * 1024;

/**
 * JSON bodies of the requests that carry one. Most /v1 requests are GETs, which have no body
 * to parse; they skip the parser's own checks (about 3% of a profile read's CPU at 1M companies).
 */
function jsonBodies(limit: number): RequestHandler {
  const parse = express.json({ limit });
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') next();
    else if (Number(req.headers['content-length']) > Math.max(limit, READ_BEFORE_REFUSING)) {
      res.setHeader('Connection', 'close');
      next(bodyTooLarge(limit));
    } else parse(req, res, next);
  };
}

function clientStatusOf(error: unknown): number | null {
  if (!(error instanceof GraphQLError)) return null;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

const PASS_THROUGH = new Set<string>([
  ...Object.keys(GRAPHQL_REQUEST_CODES),
  'BAD_REQUEST',
  'QUERY_TOO_COMPLEX',
]);

/**
 * A scalar cannot know the argument or input field it was given for, so the Date scalar's refusal
 * names `date`: the name written before the value in the document (`min_evid_date: "2022-13-01"`),
 * or the end of the path graphql-js gives for a variable's value (`at "input.min_evid_date"`), is
 * put in its place.
 */
function namedAfterArgument(e: AppError, error: unknown): AppError {
  if (!(error instanceof GraphQLError) || !e.fieldErrors.some((f) => f.field === SCALAR_FIELD)) return e;
  const node = error.nodes?.[0];
  const body = error.source?.body;
  const written =
    node?.loc && body && node.kind !== Kind.VARIABLE_DEFINITION
      ? /(\w+)\s*:\s*$/.exec(body.slice(0, node.loc.start))?.[1]
      : undefined;
  const pathEnd = /at "[^"]*?(\w+)"/.exec(error.message)?.[1];
  const name = written ?? pathEnd;
  if (!name || name === SCALAR_FIELD) return e;
  return withFieldsRenamed(e, (field) => (field === SCALAR_FIELD ? name : field));
}

/** Expected errors keep their code; unknown ones are logged and reported without detail. */
function formatGraphQLError(
  formatted: GraphQLFormattedError,
  error: unknown,
  log: Logger,
): GraphQLFormattedError {
  const original = findAppError(unwrapResolverError(error)) ?? unwrapResolverError(error);
  if (isAppError(original)) {
    const named = namedAfterArgument(original, error);
    return {
      message: named.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        code: original.code,
        status: ERROR_CODES[original.code].status,
        ...(named.fieldErrors.length > 0 ? { errors: named.fieldErrors } : {}),
        ...(original.retryAfterS !== undefined ? { retry_after_s: original.retryAfterS } : {}),
      },
    };
  }
  // Apollo re-labels every validation error GRAPHQL_VALIDATION_FAILED; the limit rules' own code is kept underneath.
  const innerCode = (error as { originalError?: { extensions?: { code?: unknown } } } | null)?.originalError
    ?.extensions?.code;
  const code = innerCode === 'QUERY_TOO_COMPLEX' ? innerCode : formatted.extensions?.code;
  if (typeof code === 'string' && PASS_THROUGH.has(code)) {
    return {
      message: formatted.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code },
    };
  }
  // Apollo refuses some malformed requests (a persisted query whose hash does not match) with a 4xx and no code.
  if (clientStatusOf(error) !== null) {
    return { message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
  }
  const errorId = crypto.randomUUID();
  log.error({ err: original, error_id: errorId }, 'unhandled GraphQL error');
  return {
    message: 'An internal error occurred; it has been logged.',
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: 'INTERNAL', error_id: errorId },
  };
}

import { ERROR_CODES } from '../domain/errors';
import { RELEVANCE_FORMULA } from '../search/relevance';
import { MAX_SUGGESTIONS, SUGGEST_DEFAULT_LIMIT } from '../services/companies.service';
import { MAX_PATHS, PATH_DEFAULTS, defaultPathTiers } from '../services/paths.service';
import { PATH_SEARCH_BUDGET } from '../services/path-search';
import { COMPANY_COLUMNS, RELATIONSHIP_COLUMNS, TIER_COLUMNS, TIERVIEW_COLUMNS } from '../domain/tierview';
import { MAX_COMPANIES_PER_TIER, MAX_COUNTRIES } from '../domain/tierview';
import { MAX_CALLBACK_URL_LENGTH } from '../domain/callback-hosts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/idempotency-key';
import { CALLBACK_DELIVERY_HEADER, CALLBACK_SIGNATURE_HEADER } from '../jobs/callbacks';
import { PAGE_DEFAULTS } from '../domain/params';
import { LIST_SEPARATOR } from '../domain/lists';
import type { Config } from '../config/env';

/**
 * The settings the document states. It is built from the running
 * configuration, so a server with other limits describes its own.
 */
export type ApiFacts = Pick<
  Config,
  | 'MAX_PAGE_SIZE'
  | 'MAX_OFFSET'
  | 'MAX_TIERS'
  | 'AUTH_FAILURE_MAX'
  | 'AUTH_FAILURE_WINDOW_S'
  | 'JOBS_MAX_QUEUED_PER_KEY'
  | 'DOWNLOAD_TTL_S'
  | 'CALLBACK_MAX_ATTEMPTS'
>;

type Json = Record<string, unknown>;

const str = { type: 'string' };
const strN = { type: ['string', 'null'] };
const int = { type: 'integer' };
const num = { type: 'number' };
const dt = { type: ['string', 'null'], format: 'date-time' };
const strList = { type: 'array', items: str };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const d = (schema: Json, description: string): Json => ({ ...schema, description });

const companyCore: Json = {
  vid: { ...str, description: 'Unique company identifier.' },
  cid_id: { ...str, description: 'Cluster identifier; a company outside any cluster is a cluster of one.' },
  name: d(str, 'Common name of the company.'),
  domains: d(strList, 'Internet domain names of the company (lower case).'),
  websites: d(strList, 'Website URLs of the company (http or https).'),
  company_legal_name: d(strN, 'Registered legal name; null when unknown.'),
  description: d(strN, 'Short description of what the company does; null when unknown.'),
  count_supplier_evidence: { ...int, description: 'Evidence items of the relationships with its suppliers.' },
  count_customer_evidence: { ...int, description: 'Evidence items of the relationships with its customers.' },
  count_customers: d(int, 'Number of its direct customers (companies, not clusters).'),
  count_suppliers: d(int, 'Number of its direct suppliers (companies, not clusters).'),
};

/** Edge status_code values (the interface leaves their meaning open; this is the service's convention). */
const STATUS_CODE_DOC =
  'Status of the relationship, as the imported data gives it: 1 = active (current evidence supports it), 2 = inactive (it is known to have ended; kept for history). ' +
  'Other integers are passed through from the data source without a meaning to this service; null: unknown. No route filters on it.';
/** Evidence status_id values, by the same convention. */
const STATUS_ID_DOC =
  'Status of the evidence item, as the imported data gives it: 1 = valid (the source stands), 2 = withdrawn (the source was retracted or superseded; kept for history). ' +
  'Other integers are passed through from the data source without a meaning to this service; null: unknown.';

/**
 * What each column of the tier-view CSV files holds. Keyed by column so a
 * column added to an export without a description fails to compile.
 */
type ExportColumn =
  (typeof TIERVIEW_COLUMNS)[number] | (typeof TIER_COLUMNS)[number] | (typeof COMPANY_COLUMNS)[number];
const CSV_COLUMN_DOCS: Record<ExportColumn, string> = {
  root_node_name: 'Delivery name (legal name where present, else name) of the root company.',
  root_node_vid: 'vid of the root company.',
  customer_tier: 'Tier of the customer of the row: its shortest distance from the root (the root is tier 0).',
  customer_delivery_name: "The customer's legal name where present, else its name.",
  customer_vid: 'vid of the customer.',
  customer_cid: "cid_id of the customer's cluster.",
  supplier_tier: 'Tier of the supplier of the row: its shortest distance from the root.',
  supplier_delivery_name: "The supplier's legal name where present, else its name.",
  supplier_vid: 'vid of the supplier.',
  supplier_cid: "cid_id of the supplier's cluster.",
  edge_ids: 'The edge behind the row (an edge_id for GET /v1/edges/{edge_id}/), as a list.',
  cluster_edge_id:
    "<supplier cid_id>~<customer cid_id>: the relationship_id of the relationship between the two companies' clusters, as the cluster_suppliers and cluster_customers lists show it; empty when both are in the same cluster.",
  edge_score: 'Confidence of the relationship, 0 to 1; empty when unknown.',
  hs_codes: 'Harmonized System codes of the goods supplied, as a list.',
  status_code: `${STATUS_CODE_DOC.replace('No route filters on it.', 'Exports keep every status.')}`,
  evidence_types:
    'Kinds of the evidence items behind the relationship (text, table, customs, ...), as a list.',
  latest_evidence_date:
    'Date (YYYY-MM-DD) of the latest evidence of the relationship; empty when it has none.',
  vid: 'vid of the company.',
  tier: 'Tier of the company: its shortest distance from the root (the root is tier 0).',
  name: 'Common name of the company.',
  company_legal_name: 'Registered legal name; empty when unknown.',
  delivery_name: 'The legal name where present, else the name.',
  cid_id: "cid_id of the company's cluster (its vid when it is in none).",
  domiciled_country: 'Country of domicile, long-form ISO 3166 name.',
  websites: 'Website URLs of the company, as a list.',
  is_public: 'true when the company is publicly listed, false when not; empty when unknown.',
  count_suppliers: 'Number of its direct suppliers in the whole graph (not only this export).',
  count_customers: 'Number of its direct customers in the whole graph (not only this export).',
  industry: 'Free-text industry of the company; empty when unknown.',
  industry_code_system: 'Classification of industry_code (NAICS, ISIC, ...); empty when no code was given.',
  industry_code: "Code of the company's industry in industry_code_system; empty when none was given.",
};

/** One CSV file's row as a schema: a string property per column, in the file's order, each described. */
const csvRow = (description: string, columns: readonly ExportColumn[]): Json => ({
  type: 'object',
  description,
  properties: Object.fromEntries(columns.map((c) => [c, { ...str, description: CSV_COLUMN_DOCS[c] }])),
});

/** Data reads answer 304 to a matching If-None-Match (see the document's description). */
const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  schema: str,
  description:
    'An ETag from an earlier answer to this URL (or *): when the data has not changed since, the answer is 304 Not Modified without a body.',
};
const etagHeader = {
  ETag: {
    schema: str,
    description:
      'Weak validator of the data this answer came from; it changes with every import (and server restart). Send it back in If-None-Match.',
  },
};
const notModified = {
  '304': {
    description: 'Not Modified: the If-None-Match tag still matches; reuse the answer stored with it.',
    headers: etagHeader,
  },
};

const page = (item: string) => ({
  type: 'object',
  required: ['next', 'previous', 'results'],
  properties: {
    next: {
      ...strN,
      format: 'uri',
      description:
        'Next page, every other parameter kept; null on the last page, and where the next page would start past the largest offset (MAX_OFFSET): narrow the criteria to see further.',
    },
    previous: { ...strN, format: 'uri', description: 'Previous page; null on the first.' },
    results: { type: 'array', items: ref(item), description: 'The items of this page.' },
  },
});

const q = (name: string, schema: Json, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
});
type PageParams = ReturnType<typeof pageParams>;
const pageParams = (f: ApiFacts) => [
  q(
    'limit',
    { ...int, minimum: 1, maximum: f.MAX_PAGE_SIZE, default: PAGE_DEFAULTS.limit },
    'Page size; above the maximum answers 400 (MAX_PAGE_SIZE).',
  ),
  q(
    'offset',
    { ...int, minimum: 0, maximum: f.MAX_OFFSET, default: PAGE_DEFAULTS.offset },
    'Start position (MAX_OFFSET).',
  ),
];
/** What a path segment may hold (anything else answers 400). */
const pathId = { ...str, minLength: 1, maxLength: 200, pattern: '^[^\\x00-\\x1f\\x7f]+$' };
/** A search text: trimmed, it must be 1 to 200 characters, none a control character. */
const searchText = {
  ...str,
  minLength: 1,
  maxLength: 200,
  pattern: '^\\s*[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*\\s*$',
};
const vidParam = { name: 'vid', in: 'path', required: true, schema: pathId, description: 'Company vid.' };
const runIdParam = {
  name: 'run_id',
  in: 'path',
  required: true,
  schema: { ...int, minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  description:
    'Run id from the start response (1 to 2^30; a larger one is no run, 404); anything but a positive integer answers 400.',
};

/**
 * The problem answers of a route: those given, and the two any route may give, 500 (an error of the
 * service's own, with a request id) and 503 (a store or jobs database that does not answer).
 */
const problems = (...statuses: number[]) =>
  Object.fromEntries(
    [...new Set([...statuses, 500, 503])].map((s) => [
      String(s),
      {
        description: Object.values(ERROR_CODES).find((c) => c.status === s)?.title ?? 'Error',
        ...(s === 429 || s === 503
          ? {
              headers: {
                'Retry-After': {
                  schema: int,
                  description:
                    s === 429
                      ? 'Seconds until the window that refused the request ends.'
                      : 'Seconds to wait before asking again, where the server can tell (while the first search index is built).',
                },
              },
            }
          : {}),
        content: { 'application/problem+json': { schema: ref('Problem') } },
      },
    ]),
  );

const ok = (schema: Json, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

/** A data read's 200 (with its ETag) and 304. */
const okTagged = (schema: Json) => ({
  '200': { ...ok(schema), headers: etagHeader },
  ...notModified,
});

const listOperation = (what: 'suppliers' | 'customers', cluster: boolean, pages: PageParams) => ({
  get: {
    operationId: `${cluster ? 'cluster' : 'company'}${what === 'suppliers' ? 'Suppliers' : 'Customers'}`,
    summary: cluster
      ? `${what === 'suppliers' ? 'Supplier' : 'Customer'} clusters of the company's cluster`
      : `${what === 'suppliers' ? 'Suppliers' : 'Customers'} of the company`,
    description: cluster
      ? "Relationships of every company sharing the cid_id of {vid}, grouped by counterpart cluster (relationship_type cluster_edge; edge_ids lists the company edges). The counterpart is the other cluster's parent. " +
        'The filters apply to each cluster_edge as a whole, as it is shown: its confidence (the highest of its edges) and its latest evidence date (the latest of its edges), which may come from two different edges; edge_ids always lists every edge it groups.'
      : 'Relationships of {vid} itself, most confident first (ties by relationship_id).',
    tags: ['relationships'],
    parameters: [
      vidParam,
      ifNoneMatch,
      q(
        'confidence_score',
        { ...num, minimum: 0, maximum: 1, default: 0 },
        'Minimum confidence (inclusive).',
      ),
      q(
        'date',
        { ...str, format: 'date' },
        'Only relationships with evidence later than this date (YYYY-MM-DD): latest evidence on or after the next day, UTC.',
      ),
      ...pages,
    ],
    responses: {
      ...okTagged(page(what === 'suppliers' ? 'SupplierItem' : 'CustomerItem')),
      ...problems(400, 401, 403, 404, 429),
    },
  },
});

const cols = (names: readonly string[]) => names.join(', ');

const csvLayout =
  'CSV files (RFC 4180: header row, CRLF line ends, UTF-8; with csv_bom, a UTF-8 byte order mark first). ' +
  `List values (edge_ids, hs_codes, evidence_types, websites) are their elements joined by "${LIST_SEPARATOR}" in one field, as in the import format (an empty list is an empty field), so companies and relationships read back into an import. ` +
  "Tiers: the root is tier 0, its direct suppliers (or customers) tier 1, and so on; a company's tier is its shortest distance from the root. " +
  `output_multiple_tables "no": one file, tierview_file, one row per customer-to-supplier relationship, columns ${cols(TIERVIEW_COLUMNS)}; ` +
  'when the walk finds no relationship, one row names the root (root_node_name, root_node_vid) with every other column empty. ' +
  '*_delivery_name is the legal name where present, else the name; edge_score is the confidence of the relationship; edge_ids lists the underlying edges. ' +
  `output_multiple_tables "yes": three files. relationships_file: ${cols(RELATIONSHIP_COLUMNS)}; ` +
  `tiers_file: ${cols(TIER_COLUMNS)}; companies_file, one row per company: ${cols(COMPANY_COLUMNS)}. ` +
  'What each column holds: the schemas TierViewFileRow, TierViewRelationshipRow, TierViewTierRow and TierViewCompanyRow.';

const callbackDoc = (f: ApiFacts) =>
  'With callback_url, one POST goes to it when the run ends, whatever the result (a run canceled before it started included). ' +
  'Its body is the run exactly as GET /v1/jobs/{run_id}/ shows it at the time of the attempt (application/json; download links signed afresh). ' +
  `Header ${CALLBACK_SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">,v1=<…>: the first v1 keyed with the callback secret of the API key that started the run ` +
  "(the operator gives it with `tiergraph keys callback-secret ID`), the last with the server's CALLBACK_SECRET; " +
  'verify it by computing the HMAC with your secret over the raw body bytes as received, accepting it when it equals one v1 (compared in constant time), and refusing a t more than 5 minutes away from your clock. ' +
  `Header ${CALLBACK_DELIVERY_HEADER}: the delivery id, one per run and the same on every attempt, to recognise a retry or a repeat (delivery is at least once). ` +
  `Any 2xx is success. Network errors, timeouts (10 s), 5xx, 408, 409, 425 and 429 are retried, up to CALLBACK_MAX_ATTEMPTS attempts (${f.CALLBACK_MAX_ATTEMPTS} here), ` +
  'with exponential backoff or the Retry-After asked for; pending retries survive a restart of the server. ' +
  'other answers, redirects included (never followed), end the delivery.';

/** Filters beyond the interface specification; a request without them gives exactly the files it always did. */
const TIERVIEW_FILTER_PROPERTIES: Json = {
  min_confidence: {
    type: ['string', 'number', 'null'],
    minimum: 0,
    maximum: 1,
    description:
      'Extension. Only relationships with a confidence of at least this (0 to 1) are walked; a relationship without a confidence counts as 0. Omitted: all.',
  },
  countries: {
    type: ['array', 'string', 'null'],
    items: { type: 'string' },
    minItems: 1,
    maxItems: MAX_COUNTRIES,
    examples: [['DE', 'Japan', 'KOR']],
    description:
      'Extension. Only companies domiciled in these countries are walked into (ISO 3166 alpha-2 or alpha-3 codes or English names, as the country search filter takes; a string is read as a comma-separated list). ' +
      'The root is always included; a company whose country is unknown or cannot be mapped to a country is left out, with everything reached only through it. An unknown country answers 400. Omitted: all.',
  },
  max_companies_per_tier: {
    type: ['string', 'integer', 'null'],
    minimum: 1,
    maximum: MAX_COMPANIES_PER_TIER,
    description:
      'Extension. Per tier, keep at most this many companies: those reached through the strongest relationship (highest confidence, then latest evidence date, then vid), and walk onward only from them. ' +
      'A company left out is not reached again in a farther tier. When companies were left out, the final state_message of the run says how many, per tier ' +
      '("max_companies_per_tier left out 3 companies (tier 1: 2, tier 2: 1)"). Omitted: no cap.',
  },
};

const tierViewRequest = (f: ApiFacts): Json => ({
  type: 'object',
  required: ['root_nodes', 'num_tiers', 'direction'],
  additionalProperties: false,
  description:
    'Values as strings (the interface form) or as JSON numbers and booleans. Unknown fields answer 400. Field problems are listed in the errors member of the 400 (body.num_tiers, ...); callback_url is checked once the other fields pass.',
  properties: {
    root_nodes: {
      ...str,
      pattern: '^[A-Za-z0-9._-]{1,64}$',
      description: 'vid of the root company (one company); an unknown vid answers 404.',
    },
    num_tiers: {
      type: ['string', 'integer'],
      pattern: '^[0-9]+$',
      minimum: 1,
      maximum: f.MAX_TIERS,
      examples: ['2'],
      description: `Tiers to map: 1 is the direct suppliers (or customers), 2 adds the next level, and so on; from 1 to MAX_TIERS (${f.MAX_TIERS} here).`,
    },
    direction: {
      ...str,
      enum: ['supplier', 'customer'],
      description: 'supplier: map the suppliers of the root; customer: its customers.',
    },
    min_evid_date: {
      ...strN,
      format: 'date',
      description:
        'Only relationships with evidence on or after this date (YYYY-MM-DD) are walked. Omitted, null or empty: no date filter.',
    },
    output_multiple_tables: {
      type: ['string', 'boolean', 'null'],
      enum: ['yes', 'no', true, false, null],
      default: 'no',
      description:
        'yes (or true): three CSV files (relationships, tier of each company, company details); no (or false, null, the default): one CSV with all of it.',
    },
    callback_url: {
      ...strN,
      format: 'uri',
      maxLength: MAX_CALLBACK_URL_LENGTH,
      description:
        "URL to POST to when the run ends. Its host (and port, where the entry names one) must be in the server's CALLBACK_HOSTS " +
        '(empty: callbacks are refused with 400); https only, unless the server sets CALLBACK_ALLOW_HTTP; no user name, password or fragment.',
    },
    ...TIERVIEW_FILTER_PROPERTIES,
    csv_bom: {
      type: ['string', 'boolean', 'null'],
      enum: ['yes', 'no', true, false, null],
      default: 'no',
      description:
        'Extension. yes (or true): the files are made for Microsoft Excel: every CSV file of the run starts with a UTF-8 byte order mark, by which Excel recognises UTF-8 when it opens the file (names with accents stay readable), ' +
        "and a text field that begins like a formula (=, +, -, @, tab, carriage return) gets a leading ' so that Excel shows it as text and never runs it. " +
        'no, false or omitted: no mark and every text as it is (most other programs neither need nor expect either).',
    },
  },
});

const jobResponses = {
  '200': ok(ref('Job')),
  ...problems(400, 401, 403, 404, 429),
};

/**
 * The OpenAPI 3.1 description of every /v1 route. Choices the interface
 * specification leaves open are stated here, where API users read them.
 */
export function openApiDocument(keyHeader: string, f: ApiFacts): Json {
  const pages = pageParams(f);
  return {
    openapi: '3.1.0',
    info: {
      title: 'tiergraph',
      version: '1.1.4',
      description:
        'Supply-chain relationship data: company search, profiles, supplier and customer lists, edges with evidence, tier-view CSV exports run as jobs. ' +
        `Every /v1 route needs an API key in the ${keyHeader} header (missing: 401, unknown or revoked: 403). ` +
        'Errors are RFC 9457 problem documents (application/problem+json). Requests are rate-limited per key ' +
        '(429 with Retry-After and the IETF RateLimit and RateLimit-Policy headers). Paths answer with and without a trailing slash. ' +
        'Unknown or repeated query parameters are refused with 400 naming them, as are integers outside the documented range (and always outside -2147483648 to 2147483647). ' +
        'A method a path does not list answers 405 (METHOD_NOT_ALLOWED) with an Allow header naming the methods it does. ' +
        `Refused keys (403; not requests without a key) are counted per client address: past AUTH_FAILURE_MAX (${f.AUTH_FAILURE_MAX} here) within AUTH_FAILURE_WINDOW_S (${f.AUTH_FAILURE_WINDOW_S} s here), ` +
        'every request from that address without a valid key answers 429 with Retry-After until the window ends; a valid key is still served. ' +
        'A company outside any cluster is a cluster of one: its cid_id is its vid. ' +
        'Caching: reads of companies, edges and clusters answer with an ETag (weak; it changes with every import and server restart); send it back in If-None-Match and an unchanged answer is 304 Not Modified, without a body. ' +
        'Compression: JSON and CSV answers are gzip or br compressed when Accept-Encoding asks for it. ' +
        'Cross-origin use: pages from the origins listed in the server setting CORS_ORIGINS (none by default) may call /v1 and /graphql from a browser. ' +
        'Their requests get Access-Control-Allow-Origin (that origin), Access-Control-Expose-Headers (ETag, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location, Idempotent-Replayed) and Vary: Origin; ' +
        `their preflights (OPTIONS with Access-Control-Request-Method) answer 204, without a key, with Access-Control-Allow-Methods (GET, POST, DELETE), Access-Control-Allow-Headers (Content-Type, If-None-Match, Idempotency-Key, ${keyHeader}) and Access-Control-Max-Age (600). ` +
        'Other origins get no Access-Control headers, so browsers keep their pages from reading answers. Every answer carries X-Request-Id.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    tags: [{ name: 'companies' }, { name: 'relationships' }, { name: 'edges' }, { name: 'jobs' }],
    paths: {
      '/v1/companies/': {
        get: {
          operationId: 'searchCompanies',
          summary: 'Search companies',
          description:
            'With `name` and sort=relevance (the default): candidates are the companies whose name has PostgreSQL pg_trgm similarity >= min_similarity to it, ' +
            'and those whose name, alias or acronym holds at least half of its words as words, word beginnings or typos; ordered by relevance, then similarity, then number of relationships, then vid. ' +
            'A query of one word (legal forms aside) ranks every company whose name, alias or acronym meets that word (as a word, a beginning or a typo) that could enter the page, read best bound first; names that only resemble it are drawn as below, and with a city, industry, website or identifier, or past 2,000 names to read, it draws as below too. ' +
            'A query of two words does the same with the names meeting either or both of them (past 500 names to read, or where one word of a name could stand for both, it draws as below). ' +
            'Where many companies match a query of more words, only some are ranked: 300 whose name, alias or acronym begins with the words of the query (as words or typos, up to a word that no name has; those named by exactly its words first), 40 more than the page of the companies holding each word of the query that can rank highest through it (rarer words first) and 50 whose one name holds two or more of them; then, unless the first of those after the page has relevance 0.65 or more, the 40 or so most similar names. At a million companies the first result is the best by the formula for about 99 queries in 100, the whole first page for about 9 in 10. ' +
            '"The page" here is the first 20 results, or the first 40, 80, ... that hold the page asked for, and the list is made of such stretches: the first 20 of the ranking drawn for 20, then up to 40 the ranking drawn for 40 less the companies listed before, and so on. Every page is cut from that one list, so a first page does not change with limit, and the next page neither repeats nor skips a company; one only a wider stretch finds is listed after the stretch before it. ' +
            `${RELEVANCE_FORMULA} ` +
            'With sort=similarity: the specified order, companies whose name has pg_trgm similarity >= min_similarity, by similarity, then by number of relationships, then by vid. ' +
            'Without `name`: by number of relationships, then by vid. All criteria given must match. By default only cluster parents and companies outside any cluster are searched.',
          tags: ['companies'],
          parameters: [
            ifNoneMatch,
            q('name', searchText, 'Name or fragment; drives search_similarity.'),
            ...pages,
            q(
              'include_subsidiaries',
              { type: 'boolean', default: false },
              'Search every company, not only cluster parents and unclustered companies.',
            ),
            q(
              'min_similarity',
              { ...num, exclusiveMinimum: 0, maximum: 1, default: 0.3 },
              'Similarity threshold (pg_trgm default 0.3).',
            ),
            q(
              'city',
              searchText,
              'City of any address, whole; case and accents aside (Istanbul finds İstanbul).',
            ),
            q(
              'industry',
              searchText,
              'Industry of the company: its industry text, its industry code, or <code system>:<code> (NAICS:334413), case-insensitive and whole.',
            ),
            q(
              'country',
              searchText,
              'Country of domicile: ISO 3166 alpha-2 or alpha-3 code, long-form or common English short name (CN, CHN, China; KR, South Korea, "Korea, Republic of"), ' +
                'or the name in German, French, Spanish, Italian, Dutch or Portuguese; case- and accent-insensitive. A value naming no country matches only that exact text.',
            ),
            q('website', searchText, 'Website or domain; scheme, www. and path are ignored.'),
            q(
              'identifier',
              searchText,
              'Any identifier value: LEI, PermID, Wikidata Q-id, ISIN, Wikipedia title.',
            ),
            q(
              'sort',
              { ...str, enum: ['relevance', 'similarity'], default: 'relevance' },
              'Order of a name search: relevance (see above) or similarity (the specified pure pg_trgm similarity order).',
            ),
          ],
          responses: { ...okTagged(page('CompanySearchResult')), ...problems(400, 401, 403, 429, 503) },
        },
      },
      '/v1/companies/suggest/': {
        get: {
          operationId: 'suggestCompanies',
          summary: 'Suggestions for a search box',
          description:
            'The most relevant companies (relevance as in the search) whose name, alias or acronym holds the typed words, the last one possibly cut short ' +
            '(robert bo: Robert Bosch GmbH), a typo allowed in words of five letters or more. A name that begins with the typed words is found even where many more important companies hold them further on in theirs, and so is one that holds two or more of them anywhere (nordwind cas: Jiangsu Nordwind Castings Co., Ltd.). ' +
            'Answered from the in-process index only. Not paged.',
          tags: ['companies'],
          parameters: [
            ifNoneMatch,
            {
              name: 'q',
              in: 'query',
              required: true,
              schema: { ...str, minLength: 1, maxLength: 200 },
              description: 'What was typed so far.',
            },
            q(
              'limit',
              { ...int, minimum: 1, maximum: MAX_SUGGESTIONS, default: SUGGEST_DEFAULT_LIMIT },
              'Most suggestions returned.',
            ),
            q(
              'include_subsidiaries',
              { type: 'boolean', default: false },
              'Suggest every company, not only cluster parents and unclustered companies.',
            ),
          ],
          responses: {
            ...okTagged({
              type: 'object',
              required: ['results'],
              properties: {
                results: { type: 'array', items: ref('CompanySuggestion'), description: 'Best first.' },
              },
            }),
            ...problems(400, 401, 403, 429, 503),
          },
        },
      },
      '/v1/companies/{vid}/': {
        get: {
          operationId: 'companyProfile',
          summary: 'Company profile',
          tags: ['companies'],
          parameters: [vidParam, ifNoneMatch],
          responses: { ...okTagged(ref('CompanyProfile')), ...problems(400, 401, 403, 404, 429) },
        },
      },
      '/v1/companies/{vid}/suppliers/': listOperation('suppliers', false, pages),
      '/v1/companies/{vid}/customers/': listOperation('customers', false, pages),
      '/v1/companies/{vid}/cluster_suppliers/': listOperation('suppliers', true, pages),
      '/v1/companies/{vid}/cluster_customers/': listOperation('customers', true, pages),
      '/v1/paths/': {
        get: {
          operationId: 'findPaths',
          summary: 'How two companies are connected',
          description:
            'The shortest supplier chains between two companies. direction=supplier (default): chains by which `to` supplies `from` through suppliers of suppliers; ' +
            'direction=customer: chains by which `from` supplies `to`. Ordered by length, then by the weakest confidence of a chain (strongest first), then by relationship ids. ' +
            'A chain never passes a company twice; companies and hops are listed from `from` to `to`. Not paged. ' +
            'The search works from both ends at once, widening the cheaper side first, and reads at most ' +
            `${PATH_SEARCH_BUDGET.maxRows.toLocaleString('en')} relationships: when that runs out after some lengths were ranked, the chains of those lengths are returned (fewer than \`limit\`); ` +
            'when it runs out before any chain was found, 422 PATHS_TOO_BROAD (ask for fewer tiers).',
          tags: ['relationships'],
          parameters: [
            {
              name: 'from',
              in: 'query',
              required: true,
              schema: str,
              description: 'vid of the company the chains start from; unknown: 404.',
            },
            {
              name: 'to',
              in: 'query',
              required: true,
              schema: str,
              description: 'vid of the company the chains lead to; unknown: 404.',
            },
            q(
              'max_tiers',
              { ...int, minimum: 1, maximum: f.MAX_TIERS, default: defaultPathTiers(f.MAX_TIERS) },
              'Most hops in a chain (MAX_TIERS).',
            ),
            q(
              'direction',
              { ...str, enum: ['supplier', 'customer'], default: 'supplier' },
              'supplier: walk towards suppliers; customer: towards customers.',
            ),
            q(
              'limit',
              { ...int, minimum: 1, maximum: MAX_PATHS, default: PATH_DEFAULTS.limit },
              'Most chains returned.',
            ),
          ],
          responses: {
            '200': ok({
              type: 'object',
              required: ['results'],
              properties: {
                results: {
                  type: 'array',
                  items: ref('SupplyChain'),
                  description: 'The chains, shortest first.',
                },
              },
            }),
            ...problems(400, 401, 403, 404, 422, 429),
          },
        },
      },
      '/v1/edges/{edge_id}/': {
        get: {
          operationId: 'edge',
          summary: 'Edge with its evidence',
          tags: ['edges'],
          parameters: [
            {
              name: 'edge_id',
              in: 'path',
              required: true,
              schema: pathId,
              description: 'From edge_ids of a list item.',
            },
            ifNoneMatch,
          ],
          responses: { ...okTagged(ref('Edge')), ...problems(400, 401, 403, 404, 429) },
        },
      },
      '/v1/clusters/{cid_id}/': {
        get: {
          operationId: 'cluster',
          summary: 'Cluster with its parent and members',
          description:
            'A cluster by its cid_id (a company outside any cluster is a cluster of one: its cid_id is its vid): the parent, and one page of members, the parent first, then by name.',
          tags: ['companies'],
          parameters: [
            { name: 'cid_id', in: 'path', required: true, schema: str, description: 'cid_id of a company.' },
            ...pages,
            ifNoneMatch,
          ],
          responses: { ...okTagged(ref('Cluster')), ...problems(400, 401, 403, 404, 429) },
        },
      },
      '/v1/tierviewjob/': {
        post: {
          operationId: 'startTierView',
          summary: 'Start a tier-view export',
          description:
            'Queues a CSV export of the suppliers (or customers) of root_nodes over num_tiers tiers and answers at once with its run_id; ' +
            'poll GET /v1/jobs/{run_id}/ for its state and download links. Up to JOBS_CONCURRENCY runs per worker go at once; later ones wait in the queue, in order, ' +
            `and state_message gives their place. One API key may have JOBS_MAX_QUEUED_PER_KEY runs (${f.JOBS_MAX_QUEUED_PER_KEY} here) pending or running at once; ` +
            'beyond that a start answers 429 with code TOO_MANY_RUNS. A run still going after JOB_TIMEOUT_S ends TIMEDOUT. A run cut off by a crash is taken up again, from its start, once its lock lapses (JOB_LOCK_S). ' +
            'With an Idempotency-Key header a start can be retried safely: a key the API key has started a run under answers with that run (200, the same body, ' +
            'Idempotent-Replayed: true) and queues nothing; the same key with another body answers 422 with code IDEMPOTENCY_KEY_REUSED. ' +
            `${csvLayout} ${callbackDoc(f)}`,
          tags: ['jobs'],
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { ...str, minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[!-~]+$' },
              description:
                "The client's name for this request (a UUID, say; in double quotes or not), so that a retry after a lost answer starts no second run. " +
                'It names the run started under it for as long as the run is kept, for this API key only.',
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('TierViewRequest'),
                // A company of the demo dataset (`npm start`, DEMO_COMPANIES 20,000), so that
                // "Try it out" in /docs starts a run there.
                example: {
                  root_nodes: 'c57dtbp',
                  num_tiers: '2',
                  direction: 'supplier',
                  min_evid_date: '2022-01-01',
                  output_multiple_tables: 'no',
                },
              },
            },
          },
          responses: {
            '200': {
              ...ok(
                {
                  type: 'object',
                  required: ['run_id'],
                  properties: {
                    run_id: {
                      ...int,
                      minimum: 1,
                      maximum: 2 ** 30,
                      description:
                        'Id of the queued run: 1 to 2^30, in no order (it tells nothing of the runs of other keys).',
                    },
                  },
                },
                'Queued (or, under an Idempotency-Key started before, the run started then)',
              ),
              headers: {
                'Idempotent-Replayed': {
                  schema: { ...str, enum: ['true'] },
                  description:
                    'Present when the Idempotency-Key named a run started before: run_id is that run.',
                },
              },
            },
            ...problems(400, 401, 403, 404, 413, 415, 429),
            '422': {
              ...problems(422)['422'],
              description: ERROR_CODES.IDEMPOTENCY_KEY_REUSED.title,
            },
          },
          callbacks: {
            runEnded: {
              '{$request.body#/callback_url}': {
                post: {
                  summary: 'The run has ended',
                  description: callbackDoc(f),
                  parameters: [
                    {
                      name: CALLBACK_SIGNATURE_HEADER,
                      in: 'header',
                      required: true,
                      schema: { ...str, pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
                      description:
                        't=<unix seconds>, then a v1=<hex HMAC-SHA256 of "<t>.<body>"> keyed with the callback secret of the key that started the run, and one keyed with CALLBACK_SECRET.',
                    },
                    {
                      name: CALLBACK_DELIVERY_HEADER,
                      in: 'header',
                      required: true,
                      schema: { ...str, format: 'uuid' },
                      description:
                        'Delivery id: one per run, the same on every attempt and on a repeated delivery.',
                    },
                  ],
                  requestBody: { required: true, content: { 'application/json': { schema: ref('Job') } } },
                  responses: {
                    '2XX': { description: 'Received; no further attempts.' },
                    default: { description: 'Retried for 408, 409, 425, 429 and 5xx; final otherwise.' },
                  },
                },
              },
            },
          },
        },
      },
      '/v1/jobs/': {
        get: {
          operationId: 'listJobs',
          summary: "The caller's tier-view runs",
          description:
            'Runs started with the API key of the request, newest first, each as GET /v1/jobs/{run_id}/ shows it. ' +
            'A run belongs to the key that started it: other keys neither list, read nor cancel it (404). ' +
            'Runs stored before runs had owners belong to no key.',
          tags: ['jobs'],
          parameters: pages,
          responses: { '200': ok(page('Job')), ...problems(400, 401, 403, 429) },
        },
      },
      '/v1/jobs/{run_id}/': {
        get: {
          operationId: 'job',
          summary: 'State of a tier-view run',
          description:
            'Poll until life_cycle_state is TERMINATED or INTERNAL_ERROR. Download links in output.result are signed afresh on every call ' +
            `and valid for DOWNLOAD_TTL_S seconds (${f.DOWNLOAD_TTL_S} here); they need no API key. After EXPORT_RETENTION_S the files are deleted: ` +
            'output is then null and state_message says so; so it is when the files were removed earlier (a shorter retention before, a storage rule, by hand).',
          tags: ['jobs'],
          parameters: [runIdParam],
          responses: jobResponses,
        },
        delete: {
          operationId: 'deleteJob',
          summary: 'Cancel a tier-view run',
          description: 'Same as POST /v1/jobs/{run_id}/cancel/.',
          tags: ['jobs'],
          parameters: [runIdParam],
          responses: jobResponses,
        },
      },
      '/v1/jobs/{run_id}/cancel/': {
        post: {
          operationId: 'cancelJob',
          summary: 'Cancel a tier-view run',
          description:
            'A PENDING run ends at once (TERMINATED, CANCELED). A RUNNING run is stopped by its worker within moments; the answer may still show RUNNING, poll for the end. ' +
            'A run that has already ended is returned as it is. The run record stays readable.',
          tags: ['jobs'],
          parameters: [runIdParam],
          responses: jobResponses,
        },
      },
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: keyHeader } },
      responses: {
        MethodNotAllowed: {
          description:
            'Answered for a method the path does not list (OpenAPI cannot attach it to an operation that does not exist).',
          headers: { Allow: { schema: str, description: 'The methods the path accepts, e.g. GET, HEAD.' } },
          content: { 'application/problem+json': { schema: ref('Problem') } },
        },
      },
      schemas: {
        CompanySearchResult: {
          type: 'object',
          properties: {
            search_similarity: {
              ...num,
              description: 'pg_trgm similarity to name (float4); present only when name is given.',
            },
            word_similarity: {
              ...num,
              description:
                'pg_trgm word_similarity(name parameter, company name) (float4); present only when name is given.',
            },
            matched_name: {
              ...str,
              description:
                'The company name, alias or derived acronym (initials of the significant words, such as TSMC) the query matched best; present only when name is given.',
            },
            ...companyCore,
          },
        },
        SupplyChain: {
          type: 'object',
          required: ['length', 'weakest_confidence', 'companies', 'hops'],
          properties: {
            length: { ...int, description: 'Number of hops.' },
            weakest_confidence: {
              type: ['number', 'null'],
              description: "Lowest confidence of the chain's hops.",
            },
            companies: {
              type: 'array',
              description: 'From `from` to `to`.',
              items: {
                type: 'object',
                required: ['vid', 'name'],
                properties: {
                  vid: d(str, 'vid of the company.'),
                  name: d(str, 'Common name of the company.'),
                },
              },
            },
            hops: {
              type: 'array',
              description: 'The relationships, from `from` to `to`.',
              items: {
                type: 'object',
                required: [
                  'relationship_id',
                  'supplier_vid',
                  'customer_vid',
                  'confidence_score',
                  'latest_evidence_date',
                ],
                properties: {
                  relationship_id: {
                    ...str,
                    description: 'Edge id; GET /v1/edges/{edge_id}/ has its evidence.',
                  },
                  supplier_vid: d(str, 'vid of the supplier of this hop.'),
                  customer_vid: d(str, 'vid of the customer of this hop.'),
                  confidence_score: d(
                    { type: ['number', 'null'] },
                    'Confidence of the relationship, 0 to 1.',
                  ),
                  latest_evidence_date: d(dt, 'Date of its latest evidence; null when it has none.'),
                },
              },
            },
          },
        },
        CompanySuggestion: {
          type: 'object',
          required: ['vid', 'name', 'matched_name', 'country'],
          properties: {
            vid: d(str, 'Unique company identifier.'),
            name: d(str, 'Common name of the company.'),
            matched_name: { ...str, description: 'The name, alias or acronym the typed words matched.' },
            country: d(
              strN,
              "The domiciled country, as relationship lists give a counterpart's: tells namesakes apart. Null when unknown.",
            ),
          },
        },
        CompanyProfile: {
          type: 'object',
          properties: {
            ...companyCore,
            identifiers: d(
              { type: 'array', items: ref('Identifier') },
              'Registry identifiers (LEI, PermID, ...).',
            ),
            domiciled_country: d(strN, 'Country of domicile, long-form ISO 3166 name; null when unknown.'),
            incorporated_country: d(
              strN,
              'Country of incorporation, long-form ISO 3166 name; null when unknown.',
            ),
            incorporation_date: d(dt, 'Date of incorporation (midnight UTC); null when unknown.'),
            ipo_date: d(
              dt,
              'Date of the initial public offering (midnight UTC); null when unknown or never listed.',
            ),
            is_active: d(
              { type: ['boolean', 'null'] },
              'Whether the company still operates; null when unknown.',
            ),
            is_freight_forwarder: d(
              { type: ['boolean', 'null'] },
              'Whether the company is a freight forwarder (its relationships may be logistics, not goods); null when unknown.',
            ),
            is_public: d(
              { type: ['boolean', 'null'] },
              'Whether the company is publicly listed; null when unknown.',
            ),
            hq_phone_number: d(strN, 'Telephone number of the headquarters; null when unknown.'),
            addresses: d(
              { type: 'array', items: ref('Address') },
              'Known addresses (headquarters, plants, ...).',
            ),
            is_cluster_parent: {
              type: 'boolean',
              description:
                'Whether the company is the parent of its cluster (false for a company outside any cluster, as in GraphQL).',
            },
            aliases: d(
              { type: 'array', items: str },
              'Other names the company is known by (former and trading names, tickers, abbreviations), as imported; search and suggestions match them like the name and say which matched in matched_name. Empty when none.',
            ),
            industry: d(strN, 'Free-text industry of the company; null when unknown.'),
            industry_code_system: d(
              strN,
              'Classification of industry_code (NAICS, ISIC, NACE, SIC, GICS, ANZSIC or another code); null when no code was given.',
            ),
            industry_code: d(
              strN,
              "Code of the company's industry in industry_code_system; null when none was given.",
            ),
          },
        },
        ClusterMember: {
          type: 'object',
          required: ['vid', 'name', 'country', 'is_cluster_parent'],
          properties: {
            vid: d(str, 'Unique company identifier.'),
            name: d(str, 'Common name of the company.'),
            country: d(strN, 'Country of domicile, long-form name; null when unknown.'),
            is_cluster_parent: d({ type: 'boolean' }, 'Whether this member is the parent of the cluster.'),
          },
        },
        Cluster: {
          type: 'object',
          required: ['cid_id', 'parent', 'next', 'previous', 'results'],
          properties: {
            cid_id: d(str, 'The cluster identifier asked for.'),
            parent: { ...ref('ClusterMember'), description: 'The parent company of the cluster.' },
            ...page('ClusterMember').properties,
          },
        },
        Identifier: {
          type: 'object',
          required: ['type', 'value'],
          properties: {
            type: {
              ...str,
              examples: ['LEI', 'PermID', 'Wikidata', 'Wikipedia', 'ISIN'],
              description:
                'Kind of identifier: LEI, PermID, Wikidata (a Q-id), Wikipedia (an article title) or ISIN.',
            },
            value: d(str, 'The identifier, as the registry writes it (check digits verified at import).'),
          },
        },
        Address: {
          type: 'object',
          properties: {
            address_line: d(strN, 'Street and number.'),
            city: d(strN, 'City.'),
            region: d(strN, 'State, province or region.'),
            postal_code: d(strN, 'Postal code.'),
            country: { ...strN, description: 'Long-form ISO 3166 name.' },
            type: {
              ...strN,
              examples: ['headquarters'],
              description: 'Kind of site: headquarters, plant, office, ...',
            },
          },
        },
        CompanySummary: {
          type: 'object',
          properties: {
            vid: companyCore.vid,
            name: companyCore.name,
            company_legal_name: companyCore.company_legal_name,
            description: companyCore.description,
            domains: companyCore.domains,
            country: { ...strN, description: 'Long-form country name of domicile.' },
            count_supplier_evidence: companyCore.count_supplier_evidence,
            count_customer_evidence: companyCore.count_customer_evidence,
            count_customers: companyCore.count_customers,
            count_suppliers: companyCore.count_suppliers,
          },
        },
        Relationship: {
          type: 'object',
          properties: {
            confidence_score: d(
              num,
              'Confidence of the relationship, 0 to 1; for a cluster_edge, the highest of its edges.',
            ),
            latest_relationship_date: d(dt, 'Date of the latest supporting evidence; null when it has none.'),
            relationship_type: {
              ...str,
              enum: ['edge', 'cluster_edge'],
              description:
                'edge: one relationship between two companies (plain lists); cluster_edge: the relationships between two clusters grouped as one (cluster lists).',
            },
            relationship_id: d(
              str,
              'For an edge, its edge_id; for a cluster_edge, <supplier cid_id>~<customer cid_id> (the cluster_edge_id of exports).',
            ),
            edge_ids: d(strList, 'The underlying edges; each works with GET /v1/edges/{edge_id}/.'),
          },
        },
        Evidences: {
          type: 'object',
          properties: {
            evidence_types: d(
              strList,
              'Kinds of the evidence items behind the relationship (text, table, customs, ...).',
            ),
          },
        },
        SupplierItem: {
          type: 'object',
          properties: {
            supplier: { ...ref('CompanySummary'), description: 'The supplier (the counterpart).' },
            relationship: { ...ref('Relationship'), description: 'The relationship with it.' },
            evidences: { ...ref('Evidences'), description: 'What kinds of evidence support it.' },
          },
        },
        CustomerItem: {
          type: 'object',
          properties: {
            customer: { ...ref('CompanySummary'), description: 'The customer (the counterpart).' },
            relationship: { ...ref('Relationship'), description: 'The relationship with it.' },
            evidences: { ...ref('Evidences'), description: 'What kinds of evidence support it.' },
          },
        },
        Evidence: {
          type: 'object',
          properties: {
            id: d(str, 'Evidence identifier.'),
            date: d(dt, 'Date of the evidence (publication or shipment).'),
            type: d(strN, 'Kind of evidence: text, table, customs, ...'),
            url: d({ ...strN, format: 'uri' }, 'Where the evidence can be read.'),
            domain: d(strN, 'Domain of the url.'),
            status_id: d({ type: ['integer', 'null'] }, STATUS_ID_DOC),
            provided_by_customer: d(
              { type: ['boolean', 'null'] },
              'true when a customer of this service supplied the evidence; null when unknown.',
            ),
            metadata: d(strN, 'Free text (often JSON) the data source attached; null when none.'),
            finalised_on: d(dt, 'When the evidence was confirmed (finalized); null while it is not.'),
            created_on: d(dt, 'When the evidence was recorded.'),
            last_modified_on: d(dt, 'When the evidence was last changed.'),
          },
        },
        Edge: {
          type: 'object',
          properties: {
            edge_id: d(str, 'Edge identifier.'),
            supplier_id: d(str, 'vid of the supplier.'),
            customer_id: d(str, 'vid of the customer.'),
            label: {
              ...str,
              examples: ['supply'],
              description: 'Kind of relationship; supply unless the data says otherwise.',
            },
            status_code: d({ type: ['integer', 'null'] }, STATUS_CODE_DOC),
            latest_edge_date: d(dt, 'Latest date found supporting the relationship; null when none.'),
            latest_finalized_edge_date: d(dt, 'Latest date of finalized evidence; null when none.'),
            last_modified_on: d(dt, 'When the edge was last changed.'),
            confidence_score: d(num, 'Confidence of the relationship, 0 to 1.'),
            hs_codes: d(
              { type: 'array', items: str },
              'Extension. Harmonized System codes of the goods supplied, as in the import and the tier-view files; empty when none are recorded.',
            ),
            evidences: d({ type: 'array', items: ref('Evidence') }, 'The evidence items, newest first.'),
          },
        },
        TierViewRequest: tierViewRequest(f),
        TierViewFileRow: csvRow(
          'A row of tierview_file (output_multiple_tables no): one customer-to-supplier relationship. Columns in this order; values as CSV text.',
          TIERVIEW_COLUMNS,
        ),
        TierViewRelationshipRow: csvRow(
          'A row of relationships_file (output_multiple_tables yes). Columns in this order.',
          RELATIONSHIP_COLUMNS as ExportColumn[],
        ),
        TierViewTierRow: csvRow('A row of tiers_file: one company and its tier.', TIER_COLUMNS),
        TierViewCompanyRow: csvRow('A row of companies_file: one company of the export.', COMPANY_COLUMNS),
        Job: {
          type: 'object',
          required: ['run_id', 'state', 'output'],
          properties: {
            run_id: {
              ...str,
              pattern: '^[1-9][0-9]*$',
              description: 'The run id, as a string (1 to 2^30, in no order).',
            },
            state: { ...ref('JobState'), description: 'Where the run is.' },
            output: {
              description: 'null, empty or the files, depending on the state (see each case).',
              oneOf: [
                {
                  type: 'null',
                  description:
                    'PENDING, or ended without files (failed, canceled, timed out, files deleted).',
                },
                { type: 'object', maxProperties: 0, description: 'RUNNING.' },
                ref('JobOutput'),
              ],
            },
          },
        },
        JobState: {
          type: 'object',
          required: ['life_cycle_state', 'state_message', 'user_cancelled_or_timedout'],
          properties: {
            life_cycle_state: {
              ...str,
              enum: ['PENDING', 'RUNNING', 'TERMINATED', 'INTERNAL_ERROR'],
              description:
                'PENDING: queued; RUNNING: exporting; TERMINATED: ended (see result_state); INTERNAL_ERROR: ended by a fault of the server (the error is logged).',
            },
            result_state: {
              ...str,
              enum: ['SUCCESS', 'FAILED', 'CANCELED', 'TIMEDOUT'],
              description:
                'Present only once the run has ended. SUCCESS: the files are ready (output.result); FAILED: the run could not finish (state_message says why: an unknown root, the disk budget, ...); ' +
                'CANCELED: cancelled by its key; TIMEDOUT: still going after JOB_TIMEOUT_S.',
            },
            state_message: {
              ...str,
              description:
                'PENDING: place in the queue; RUNNING: progress; SUCCESS: empty, unless companies were left out by max_companies_per_tier (how many, per tier) or no relationship matched (the files then hold no relationship rows); otherwise why the run ended.',
            },
            user_cancelled_or_timedout: {
              type: 'boolean',
              description: 'true when result_state is CANCELED or TIMEDOUT.',
            },
          },
        },
        JobOutput: {
          type: 'object',
          required: ['result', 'truncated'],
          properties: {
            result: {
              ...str,
              contentMediaType: 'application/json',
              description:
                'JSON text of an object mapping tierview_file (one table) or relationships_file, tiers_file and companies_file (three tables) to signed download URLs, ' +
                `valid DOWNLOAD_TTL_S seconds (${f.DOWNLOAD_TTL_S} here) and fetched without an API key. With BLOB_STORE=local they are links to this server ` +
                '(/downloads/..., HMAC-signed; a bad signature answers 403, an expired link or a deleted file 410); with BLOB_STORE=gcs, Cloud Storage V4 signed URLs.',
              examples: [
                '{"tierview_file":"https://host/downloads/runs/583620177/a3f9c2e81b7d40652/tierview-583620177.csv?expires=1700000000&signature=..."}',
              ],
            },
            truncated: { type: 'boolean', description: 'Always false: exports are never cut short.' },
          },
        },
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail', 'code'],
          properties: {
            type: d(
              { ...str, format: 'uri-reference' },
              'Link to the explanation of the code on /docs (/docs#error-not-found).',
            ),
            title: d(str, 'Short summary of the kind of problem (the same for every problem of a code).'),
            status: d(int, 'The HTTP status of the answer.'),
            detail: d(str, 'What went wrong with this request, for a person to read.'),
            instance: d(str, 'The path and query of the request.'),
            code: {
              ...str,
              enum: Object.keys(ERROR_CODES),
              description: `Stable code of the problem: ${Object.entries(ERROR_CODES)
                .map(([c, e]) => `${c} (${e.status}: ${e.title})`)
                .join('; ')}.`,
            },
            request_id: d(
              str,
              'Id of the request (also in X-Request-Id); quote it when reporting a 500, which is logged with it.',
            ),
            errors: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  field: d(str, 'Where: query.limit, path.vid, body.num_tiers, ...'),
                  reason: d(str, 'Why the value was refused.'),
                },
              },
              description: 'Field-level problems: where (query.limit, path.vid, body.num_tiers) and why.',
            },
          },
        },
      },
    },
  };
}

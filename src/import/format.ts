/**
 * The import format: which CSV files a dataset directory holds, their columns,
 * and how each value is checked and normalised. docs/import-format.md is the
 * user-facing description of the same rules; keep the two in step.
 */
import { LIST_SEPARATOR } from '../domain/lists';
import { detach } from '../memoize';
import { LIST_ELEMENT_FORBIDDEN, isListElement } from '../store/tables';

/** Separator of list values inside one field of an import file (domains, websites, hs_codes, aliases); exports use it too. */
export const INPUT_LIST_SEPARATOR = LIST_SEPARATOR;

/** How a column's values are checked. */
export type ValueKind =
  | 'id'
  | 'name'
  | 'text'
  | 'country'
  | 'date'
  | 'boolean'
  | 'integer'
  | 'confidence'
  | 'url'
  | 'domain'
  | 'domain-list'
  | 'url-list'
  | 'hs-code-list'
  | 'alias-list'
  | 'phone'
  | 'token'
  | 'identifier-type'
  | 'identifier-value';

export interface InputColumn {
  readonly name: string;
  readonly kind: ValueKind;
  /** Required columns must be in the header and hold a value in every row. */
  readonly required: boolean;
  /** Free text: tabs and line breaks become spaces instead of rejecting the row. */
  readonly freeText?: boolean;
}

export interface InputFile {
  readonly file: string;
  /** A dataset without this file is refused; optional files may be absent. */
  readonly required: boolean;
  readonly columns: readonly InputColumn[];
}

const col = (name: string, kind: ValueKind, required = false, freeText = false): InputColumn => ({
  name,
  kind,
  required,
  freeText,
});

/** The files of an import directory, in the order they are read (references point backwards). */
export const INPUT_FILES = {
  companies: {
    file: 'companies.csv',
    required: true,
    columns: [
      col('vid', 'id', true),
      col('name', 'name', true),
      col('company_legal_name', 'name'),
      col('description', 'text', false, true),
      col('domains', 'domain-list'),
      col('websites', 'url-list'),
      col('domiciled_country', 'country'),
      col('incorporated_country', 'country'),
      col('incorporation_date', 'date'),
      col('ipo_date', 'date'),
      col('is_active', 'boolean'),
      col('is_public', 'boolean'),
      col('is_freight_forwarder', 'boolean'),
      col('hq_phone_number', 'phone'),
      col('aliases', 'alias-list'),
      col('industry', 'name'),
      col('industry_code_system', 'token'),
      col('industry_code', 'token'),
    ],
  },
  clusters: {
    file: 'clusters.csv',
    required: false,
    columns: [col('cid_id', 'id', true), col('vid', 'id', true), col('is_parent', 'boolean', true)],
  },
  identifiers: {
    file: 'identifiers.csv',
    required: false,
    columns: [
      col('vid', 'id', true),
      col('type', 'identifier-type', true),
      col('value', 'identifier-value', true),
    ],
  },
  addresses: {
    file: 'addresses.csv',
    required: false,
    columns: [
      col('vid', 'id', true),
      col('address_line', 'text', false, true),
      col('city', 'name'),
      col('region', 'name'),
      col('postal_code', 'name'),
      col('country', 'country'),
      col('type', 'token'),
    ],
  },
  relationships: {
    file: 'relationships.csv',
    required: true,
    columns: [
      col('edge_id', 'id', true),
      col('supplier_id', 'id', true),
      col('customer_id', 'id', true),
      col('confidence_score', 'confidence', true),
      col('label', 'token'),
      col('status_code', 'integer'),
      col('latest_edge_date', 'date'),
      col('latest_finalized_edge_date', 'date'),
      col('last_modified_on', 'date'),
      col('hs_codes', 'hs-code-list'),
    ],
  },
  evidence: {
    file: 'evidence.csv',
    required: false,
    columns: [
      col('id', 'id', true),
      col('edge_id', 'id', true),
      col('date', 'date', true),
      col('type', 'token'),
      col('url', 'url'),
      col('domain', 'domain'),
      col('status_id', 'integer'),
      col('provided_by_customer', 'boolean'),
      col('metadata', 'text', false, true),
      col('finalised_on', 'date'),
      col('created_on', 'date'),
      col('last_modified_on', 'date'),
    ],
  },
} as const satisfies Record<string, InputFile>;

export type InputFileName = keyof typeof INPUT_FILES;

/** Read order of the input files. */
export const INPUT_ORDER: readonly InputFileName[] = [
  'companies',
  'clusters',
  'identifiers',
  'addresses',
  'relationships',
  'evidence',
];

/** Label of a relationship whose label field is blank. */
export const DEFAULT_LABEL = 'supply';

/** Canonical spelling of the accepted identifier types. */
export const IDENTIFIER_TYPES = ['LEI', 'PermID', 'Wikidata', 'Wikipedia', 'ISIN'] as const;
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

/** A value that breaks a rule; the message is the rejection reason. */
export class ValueError extends Error {}

/**
 * Refuses a row whose id an earlier row of the file held, though that row was rejected (`rejected`:
 * line by id): ids are unique in a file whatever became of their rows, so a later row never stands
 * in for a rejected one (nor receives what referred to it). Rows are rarely rejected: while none
 * was, a row pays no lookup.
 */
export function refuseIdOfRejected(rejected: ReadonlyMap<string, number>, what: string, id: string): void {
  if (rejected.size === 0) return;
  const line = rejected.get(id);
  if (line !== undefined) fail(`duplicate ${what} "${id}" (first at line ${line}, which was rejected)`);
}

function fail(reason: string): never {
  throw new ValueError(reason);
}

/** Shortens a value for quoting inside a rejection reason. */
export function excerpt(v: string): string {
  const s = v.length > 40 ? `${v.slice(0, 40)}…` : v;
  return JSON.stringify(s);
}

/** Maximum length of each kind of string value, in characters. */
export const MAX_LENGTH = { id: 64, name: 500, text: 10000, token: 64, url: 2000, country: 100 } as const;

/**
 * Whether `v` has more than `max` characters, counted as code points (as aliases are, and as the
 * documented limits read): "😀" is one character, two UTF-16 units. A string no longer than `max`
 * units is no longer in code points, so the count runs only for the rare long value.
 */
export function longerThan(v: string, max: number): boolean {
  if (v.length <= max) return false;
  let n = 0;
  for (const _ of v) if (++n > max) return true;
  return false;
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Whether v is a valid key (see checkId). */
export function isId(v: string): boolean {
  return ID_RE.test(v);
}

/** Keys (vid, edge_id, evidence id, cid_id): URL-path-safe, 1 to 64 characters. */
export function checkId(v: string): string {
  if (!ID_RE.test(v)) {
    fail(`${excerpt(v)} is not a valid id (1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)`);
  }
  return v;
}

/** Short single-line strings: names, cities, postal codes. */
export function checkName(v: string): string {
  if (longerThan(v, MAX_LENGTH.name)) fail(`longer than ${MAX_LENGTH.name} characters`);
  return v;
}

/** Free text (descriptions, metadata). */
export function checkText(v: string): string {
  if (longerThan(v, MAX_LENGTH.text)) fail(`longer than ${MAX_LENGTH.text} characters`);
  return v;
}

const LETTER_RE = /\p{L}/u;

/** Country names: any non-empty name containing a letter. */
export function checkCountry(v: string): string {
  if (longerThan(v, MAX_LENGTH.country)) fail(`longer than ${MAX_LENGTH.country} characters`);
  if (!LETTER_RE.test(v)) fail(`${excerpt(v)} is not a country name`);
  return v;
}

const TOKEN_RE = /^[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,63}$/;

/** Short codes such as evidence types, labels and address types. */
export function checkToken(v: string): string {
  if (!TOKEN_RE.test(v)) fail(`${excerpt(v)} is not a valid code (1-64 of letters, digits, space _ . : / -)`);
  return v;
}

/** 3 to 40 characters, the + included; a digit or ( first after it; at least one digit. */
const PHONE_RE = /^(?=.{3,40}$)(?=[^0-9]*[0-9])\+?[0-9(][0-9 ()./-]*$/;

/** Phone numbers: digits with the usual punctuation, optional leading +. */
export function checkPhone(v: string): string {
  if (!PHONE_RE.test(v)) fail(`${excerpt(v)} is not a phone number`);
  return v;
}

const BOOLEANS: Record<string, 'true' | 'false'> = {
  true: 'true',
  false: 'false',
  '1': 'true',
  '0': 'false',
  yes: 'true',
  no: 'false',
};

/** true/false, 1/0, yes/no (any case) to `true` / `false`. */
export function normBoolean(v: string): 'true' | 'false' {
  const b = BOOLEANS[v] ?? BOOLEANS[v.toLowerCase()];
  if (b === undefined) fail(`${excerpt(v)} is not a boolean (true/false, 1/0, yes/no)`);
  return b;
}

const INT_RE = /^[+-]?\d{1,16}$/;

/** Integers within ±2^53, normalised to plain decimal. */
export function normInteger(v: string): string {
  if (!INT_RE.test(v)) fail(`${excerpt(v)} is not an integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) fail(`${excerpt(v)} is out of range`);
  return String(n);
}

const DECIMAL_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Confidence scores: a decimal number in (0, 1]. */
export function parseConfidence(v: string): number {
  if (!DECIMAL_RE.test(v)) fail(`${excerpt(v)} is not a number`);
  const n = Number(v);
  if (!(n > 0 && n <= 1)) fail(`${excerpt(v)} is outside (0, 1]`);
  return n;
}

const DOMAIN_RE =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Domain names (ASCII or punycode), lower-cased. */
export function normDomain(v: string): string {
  const d = v.toLowerCase();
  if (!DOMAIN_RE.test(d)) fail(`${excerpt(v)} is not a domain name`);
  return d;
}

/** A host name of labels (letters, digits, inner hyphens; underscores, which some hosts use). */
const HOST_LABELS =
  '[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\\.?';
/** The common case, checked without building a URL: a host of labels, a port of up to 4 digits. */
const SIMPLE_URL_RE = new RegExp(`^https?://(${HOST_LABELS})(?::\\d{1,4})?(?:[/?#][!#-;=?-[\\]_a-z~%]*)?$`);
/** A host as the URL parser gives it: labels, or an IPv6 literal in brackets. */
const URL_HOST_RE = new RegExp(`^(?:${HOST_LABELS}|\\[[0-9a-fA-F:.]+\\])$`);

/** http(s) URLs; returns the URL unchanged. */
export function checkUrl(v: string): string {
  if (longerThan(v, MAX_LENGTH.url)) fail(`URL longer than ${MAX_LENGTH.url} characters`);
  if (SIMPLE_URL_RE.test(v)) return v;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    fail(`${excerpt(v)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(`${excerpt(v)} is not an http(s) URL`);
  if (/\s/.test(v)) fail(`${excerpt(v)} contains white space`);
  // The parser takes hosts such as "..." or "a..b"; no such host can be reached.
  if (!URL_HOST_RE.test(u.hostname)) fail(`${excerpt(v)} has no valid host name`);
  return v;
}

/** Host name of a URL that checkUrl accepted, lower-cased. */
export function urlHost(v: string): string {
  const m = SIMPLE_URL_RE.exec(v);
  if (m?.[1] !== undefined) return m[1].toLowerCase();
  return new URL(v).hostname.toLowerCase();
}

const HS_RE = /^\d{2,4}(?:\.?\d{2}){0,3}$/;

/** Harmonized System codes: 2 to 10 digits, optionally dotted after the heading (8471.30). */
export function checkHsCode(v: string): string {
  if (!HS_RE.test(v)) fail(`${excerpt(v)} is not an HS code`);
  return v;
}

/** Why a value cannot be an element of a staged list, or '' when it can (see isListElement). */
function listElementProblem(v: string): string {
  if (v.length === 0) return 'is empty';
  if (v.trim() !== v) return 'starts or ends with white space';
  const bad = LIST_ELEMENT_FORBIDDEN.exec(v)?.[0];
  if (bad !== undefined) return `holds ${JSON.stringify(bad)}`;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f)
      return `holds control character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return '';
}

/**
 * Checks that a value can be an element of a staged list (the staging list
 * syntax cannot hold `, [ ] { } ' " \`); returns it unchanged.
 */
export function checkListElement(v: string): string {
  if (isListElement(v)) return v;
  fail(`${excerpt(v)} cannot be a list element: it ${listElementProblem(v)}`);
}

/** Characters a list element cannot hold, percent-encoded as a URL may write them. */
const URL_ESCAPES: Readonly<Record<string, string>> = {
  ',': '%2C',
  "'": '%27',
  '"': '%22',
  '[': '%5B',
  ']': '%5D',
  '{': '%7B',
  '}': '%7D',
  '\\': '%5C',
};
const URL_ESCAPE_RE = /[,'"[\]{}\\]/g;
/** Scheme and authority of a URL: what percent-encoding would change the meaning of. */
const URL_AUTHORITY_RE = /^[^:]*:\/\/[^/?#]*/;

/**
 * Website URLs, which are staged as list elements: checkUrl, then `, ' " [ ] { } \`
 * in the path, query or fragment percent-encoded (the URL stays equivalent).
 * Before the path (user, host, port) they cannot be encoded, so such a URL is refused.
 */
export function normWebsite(v: string): string {
  const u = checkUrl(v);
  const escaped = u.replace(URL_ESCAPE_RE, (c) => URL_ESCAPES[c] ?? c);
  if (escaped !== u && URL_AUTHORITY_RE.exec(u)?.[0] !== URL_AUTHORITY_RE.exec(escaped)?.[0]) {
    fail(`${excerpt(v)} cannot be a list element: it holds one of , ' " [ ] { } \\ before its path`);
  }
  return checkListElement(escaped);
}

/**
 * Splits a `|`-separated list, trims and checks each element, drops repeats,
 * and checks that each result can be a staged list element.
 */
export function normList(v: string, check: (element: string) => string): string[] {
  if (v.indexOf(INPUT_LIST_SEPARATOR) < 0) return [checkListElement(check(v))];
  const out: string[] = [];
  for (const raw of v.split(INPUT_LIST_SEPARATOR)) {
    const e = raw.trim();
    if (e.length === 0) fail(`empty element in list ${excerpt(v)}`);
    const n = checkListElement(check(e));
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** Longest alias, in characters, and most aliases of one company. */
export const MAX_ALIAS_LENGTH = 200;
export const MAX_ALIASES = 20;

/**
 * A company's aliases: `|`-separated, each trimmed, non-empty and at most
 * MAX_ALIAS_LENGTH characters, at most MAX_ALIASES of them, repeats dropped.
 * Any other character is allowed: aliases are staged as TEXT[], which encodes
 * the list syntax (tables.ts).
 */
export function normAliases(v: string): string[] {
  const out: string[] = [];
  for (const raw of v.split(INPUT_LIST_SEPARATOR)) {
    const a = raw.trim();
    if (a.length === 0) fail(`empty alias in ${excerpt(v)}`);
    if (longerThan(a, MAX_ALIAS_LENGTH))
      fail(`alias ${excerpt(a)} is longer than ${MAX_ALIAS_LENGTH} characters`);
    if (!out.includes(a)) out.push(a);
  }
  if (out.length > MAX_ALIASES) fail(`more than ${MAX_ALIASES} aliases`);
  return out;
}

/** Industry classifications spelled the usual way whatever the case they come in. */
const CODE_SYSTEMS = new Map(
  ['NAICS', 'ISIC', 'NACE', 'SIC', 'GICS', 'ANZSIC'].map((s) => [s.toLowerCase(), s]),
);

/** An industry code system: a code (checkToken), the well-known ones in their usual capitals. */
export function normCodeSystem(v: string): string {
  return CODE_SYSTEMS.get(v.toLowerCase()) ?? checkToken(v);
}

const TYPES_BY_LOWER = new Map<string, IdentifierType>(IDENTIFIER_TYPES.map((t) => [t.toLowerCase(), t]));

/** Identifier types, any case, to their canonical spelling. */
export function normIdentifierType(v: string): IdentifierType {
  const t = TYPES_BY_LOWER.get(v.toLowerCase());
  if (t === undefined) fail(`${excerpt(v)} is not an identifier type (${IDENTIFIER_TYPES.join(', ')})`);
  return t;
}

/** Value of `A`..`Z` as ISO 7064 / Luhn digits use it (A=10 ... Z=35). */
function alnumValue(c: number): number {
  return c <= 57 ? c - 48 : c - 55;
}

/** ISO 17442 check: the 20-character LEI read as a base-36 number is 1 mod 97. */
export function leiChecksumOk(lei: string): boolean {
  let r = 0;
  for (let i = 0; i < lei.length; i++) {
    const d = alnumValue(lei.charCodeAt(i));
    r = d >= 10 ? (r * 100 + d) % 97 : (r * 10 + d) % 97;
  }
  return r === 1;
}

/** The two check digits that complete an 18-character LEI prefix. */
export function leiCheckDigits(prefix18: string): string {
  let r = 0;
  for (let i = 0; i < prefix18.length; i++) {
    const d = alnumValue(prefix18.charCodeAt(i));
    r = d >= 10 ? (r * 100 + d) % 97 : (r * 10 + d) % 97;
  }
  r = (r * 100) % 97;
  const check = 98 - r;
  return check < 10 ? `0${check}` : String(check);
}

/** ISO 6166 check digit (Luhn over the letters expanded to numbers) for an 11-character ISIN prefix. */
export function isinCheckDigit(prefix11: string): string {
  let digits = '';
  for (let i = 0; i < prefix11.length; i++) digits += String(alnumValue(prefix11.charCodeAt(i)));
  let sum = 0;
  let double = true;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return String((10 - (sum % 10)) % 10);
}

const LEI_RE = /^[0-9A-Z]{18}[0-9]{2}$/;
const ISIN_RE = /^[A-Z]{2}[0-9A-Z]{9}[0-9]$/;
const PERMID_RE = /^[1-9][0-9]{0,19}$/;
const QID_RE = /^Q[1-9][0-9]{0,11}$/;

/** Checks an identifier value against its type (check digits included). */
export function checkIdentifierValue(type: IdentifierType, v: string): string {
  switch (type) {
    case 'LEI':
      if (!LEI_RE.test(v)) fail(`${excerpt(v)} is not an LEI (20 characters A-Z 0-9)`);
      if (!leiChecksumOk(v)) fail(`LEI ${excerpt(v)} has wrong check digits`);
      return v;
    case 'ISIN':
      if (!ISIN_RE.test(v)) fail(`${excerpt(v)} is not an ISIN (12 characters)`);
      if (isinCheckDigit(v.slice(0, 11)) !== v.slice(11)) fail(`ISIN ${excerpt(v)} has a wrong check digit`);
      return v;
    case 'PermID':
      if (!PERMID_RE.test(v)) fail(`${excerpt(v)} is not a PermID (digits)`);
      return v;
    case 'Wikidata':
      if (!QID_RE.test(v)) fail(`${excerpt(v)} is not a Wikidata id (Q followed by digits)`);
      return v;
    case 'Wikipedia':
      if (longerThan(v, MAX_LENGTH.name)) fail(`longer than ${MAX_LENGTH.name} characters`);
      return v;
  }
}

/** Accepted range of dates, as milliseconds since the epoch (UTC). */
export interface DateRange {
  readonly min: number;
  readonly max: number;
  readonly label: string;
}

/** Most dates: 1900-01-01 to 2100-12-31. */
export const DATE_RANGE: DateRange = {
  min: Date.UTC(1900, 0, 1),
  max: Date.UTC(2100, 11, 31, 23, 59, 59, 999),
  label: '1900-01-01 to 2100-12-31',
};

/** Incorporation dates reach further back: 1000-01-01 to 2100-12-31. */
export const OLD_DATE_RANGE: DateRange = {
  min: Date.UTC(1000, 0, 1),
  max: DATE_RANGE.max,
  label: '1000-01-01 to 2100-12-31',
};

const DATE_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?))?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Parses `YYYY-MM-DD` (midnight UTC) or an ISO 8601 date-time with a zone
 * (`Z`, `+hh:mm`, `+hhmm`, `+hh`) to epoch milliseconds; NaN when the text is
 * not such a date or names a day that does not exist.
 */
export function parseIsoDate(v: string): number {
  const m = DATE_RE.exec(v);
  if (!m) return NaN;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const dim = mo === 2 && leap ? 29 : (DAYS_IN_MONTH[mo - 1] as number);
  if (d > dim) return NaN;
  let ms = Date.UTC(y, mo - 1, d);
  if (m[4] === undefined) return ms;
  const hh = Number(m[4]);
  const mi = Number(m[5]);
  const ss = m[6] === undefined ? 0 : Number(m[6]);
  const frac = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  if (hh > 23 || mi > 59 || ss > 59) return NaN;
  ms += ((hh * 60 + mi) * 60 + ss) * 1000 + frac;
  const zone = m[8] as string;
  if (zone !== 'Z') {
    const sign = zone.charCodeAt(0) === 45 ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 14 || om > 59) return NaN;
    ms -= sign * (oh * 60 + om) * 60000;
  }
  return ms;
}

/** Milliseconds in a day: a staged date at midnight UTC is a multiple of it. */
export const DAY_MS = 86400000;

function digitAt(v: string, i: number): number {
  const d = v.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1000000;
}

/**
 * Fast path for `YYYY-MM-DD`, by far the most common form: epoch milliseconds,
 * NaN for an impossible day, undefined when v is not in this form at all.
 */
function plainDate(v: string): number | undefined {
  if (v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45) return undefined;
  const y = digitAt(v, 0) * 1000 + digitAt(v, 1) * 100 + digitAt(v, 2) * 10 + digitAt(v, 3);
  const m = digitAt(v, 5) * 10 + digitAt(v, 6);
  const d = digitAt(v, 8) * 10 + digitAt(v, 9);
  if (y < 0 || m < 1 || m > 12 || d < 1) return NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > (m === 2 && leap ? 29 : (DAYS_IN_MONTH[m - 1] as number))) return NaN;
  // Days from civil (proleptic Gregorian), as in H. Hinnant's date algorithms.
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return (era * 146097 + doe - 719468) * DAY_MS;
}
const DAY_CACHE_OFFSET = 400000;
/** ISO text by day number; filled ahead so that the array stays dense (a sparse one is a slow dictionary). */
const dayIsoCache: string[] = new Array<string>(2 * DAY_CACHE_OFFSET).fill('');

/** ISO 8601 UTC text of epoch milliseconds: `2021-03-04T00:00:00Z`, with `.sss` only when not zero. */
export function isoOf(ms: number): string {
  if (ms % DAY_MS === 0) {
    const k = ms / DAY_MS + DAY_CACHE_OFFSET;
    const hit = dayIsoCache[k];
    if (hit !== undefined && hit !== '') return hit;
    const s = `${new Date(ms).toISOString().slice(0, 19)}Z`;
    if (k >= 0 && k < 2 * DAY_CACHE_OFFSET) dayIsoCache[k] = s;
    return s;
  }
  const s = new Date(ms).toISOString();
  return s.endsWith('.000Z') ? `${s.slice(0, 19)}Z` : s;
}

/**
 * Caches parsed dates by their text: real data repeats the same few thousand
 * days millions of times. The cache is dropped when it grows past its bound.
 */
export class DateParser {
  private cache = new Map<string, number>();

  /** Epoch milliseconds of a non-empty date value, or a ValueError. */
  parse(v: string, range: DateRange): number {
    let ms = v.length === 10 ? plainDate(v) : this.cache.get(v);
    if (ms === undefined) {
      ms = parseIsoDate(v);
      if (this.cache.size >= 500000) this.cache = new Map();
      this.cache.set(detach(v), ms);
    }
    if (Number.isNaN(ms)) fail(`${excerpt(v)} is not a date (YYYY-MM-DD or ISO 8601 with zone)`);
    if (ms < range.min || ms > range.max) fail(`${excerpt(v)} is outside ${range.label}`);
    return ms;
  }
}

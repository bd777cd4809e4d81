import type {
  Address,
  CompanyCore,
  CompanyProfile,
  CompanySummary,
  EdgeRecord,
  Evidence,
  Identifier,
  RelationshipItem,
} from '../domain/model';
import { hostsOf } from '../domain/hosts';
import type { SearchName, SearchRow } from '../domain/search-row';
import type { TierCompany, TierRelationship } from '../domain/tier-walk';
import type { PathStep } from './graph-store';
import { decodeTextElement } from './tables';

/**
 * Turns engine values (plain property maps, after each adapter has unwrapped its
 * own node type) into the domain shapes. Shared by every adapter so that both
 * engines answer with identical objects.
 */
export type Props = Record<string, unknown>;

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return null;
}

export function num(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return null;
}

export function int(v: unknown): number {
  return num(v) ?? 0;
}

export function bool(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

/** Dates made by a native addon may come from another realm, so `instanceof Date` is not enough. */
export function isDate(v: unknown): v is Date {
  return v instanceof Date || Object.prototype.toString.call(v) === '[object Date]';
}

export function iso(v: unknown): string | null {
  if (isDate(v)) return isoOfTime(v.getTime());
  if (typeof v === 'string') {
    // Most texts (the evidence's days, timestamps written out as text) are already in the form,
    // or a day of it: parsing and printing them again took a tenth of an edge read's CPU.
    const ready = isoAsIs(v);
    if (ready !== null) return ready;
    // Dates inside JSON columns come as text: give them the same form as the engine's timestamps.
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? v : d.toISOString();
  }
  return null;
}

/** Days of each month in a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number written by `s[at, at + n)` in ASCII digits; -1 when one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let value = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * What `new Date(s).toISOString()` gives for `s` in the ISO form (`2025-01-31T08:05:00.000Z`) or
 * its day (`2025-01-31`), worked out without parsing: the text itself, or the day at midnight UTC.
 * Null for any other text, and for a day or time that does not exist as written (`new Date`
 * moves the 31st of April to the 1st of May, and 24:00 to the next day): those are parsed.
 */
export function isoAsIs(s: string): string | null {
  const long = s.length === 24;
  if (!long && s.length !== 10) return null;
  if (s[4] !== '-' || s[7] !== '-') return null;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return null;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > MONTH_DAYS[month - 1]! + (leap ? 1 : 0)) return null;
  if (!long) return `${s}T00:00:00.000Z`;
  if (s[10] !== 'T' || s[13] !== ':' || s[16] !== ':' || s[19] !== '.' || s[23] !== 'Z') return null;
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  return digits(s, 20, 3) < 0 ? null : s;
}

/** "00" to "99". */
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const DAY_MS = 86_400_000;

/**
 * `new Date(time).toISOString()`, null for NaN. A time at midnight UTC in years 0-9999 (every
 * relationship date the engines hold) is written out by arithmetic on its day number (the civil
 * calendar from days since 1970), without making a Date.
 */
export function isoOfTime(time: number): string | null {
  if (Number.isNaN(time)) return null;
  const days = time / DAY_MS;
  if (!Number.isInteger(days) || days < -719_528 || days > 2_932_896) return new Date(time).toISOString();
  // Days since 0000-03-01, in 400-year eras of 146,097 days; years start in March so that the
  // leap day ends the year.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1_460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const m = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * m + 2) / 5) + 1;
  const month = m < 10 ? m + 3 : m - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const y = TWO_DIGITS[Math.floor(year / 100)]! + TWO_DIGITS[year % 100]!;
  return `${y}-${TWO_DIGITS[month]!}-${TWO_DIGITS[day]!}T00:00:00.000Z`;
}

/** A list value: a real list, or the staged list literal `[a,b]` kept as text by the embedded schema. */
export function strings(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string' && v.startsWith('[') && v.endsWith(']')) {
    // Elements never hold commas or brackets (staging contract), so splitting is exact.
    return v.length === 2 ? [] : v.slice(1, -1).split(',');
  }
  return [];
}

/** A TEXT[] value (aliases): a real list, or the staged literal with its elements percent-encoded. */
export function texts(v: unknown): string[] {
  if (Array.isArray(v)) return strings(v);
  return strings(v).map(decodeTextElement);
}

export function maps(v: unknown): Props[] {
  return Array.isArray(v) ? v.filter((x): x is Props => typeof x === 'object' && x !== null) : [];
}

/** A JSON column (identifiers, addresses, evidences): text from the engine, or an already parsed list. */
export function jsonList(v: unknown): Props[] {
  if (typeof v !== 'string') return maps(v);
  if (v === '') return [];
  try {
    return maps(JSON.parse(v));
  } catch {
    return [];
  }
}

/**
 * The string values of `key` in the objects of a JSON list column, in order: what
 * `jsonList(v).flatMap((o) => (typeof o[key] === 'string' ? [o[key]] : []))` gives, read from the
 * text without making its objects when it has the form the staging writes (objects of string and
 * null values, no escapes, no spaces), which is every staged row; any other text is parsed.
 * A search index's build reads a city and an identifier list per company this way: parsing them
 * took a third of mapping a company's search row.
 */
export function stringsAt(v: unknown, key: string): string[] {
  if (typeof v === 'string') {
    const scanned = scanStringsAt(v, key);
    if (scanned !== null) return scanned;
  }
  const out: string[] = [];
  for (const o of jsonList(v)) {
    const value = o[key];
    if (typeof value === 'string') out.push(value);
  }
  return out;
}

/** Characters a JSON text of the scanned form never holds: escapes, and control characters (which JSON.parse refuses). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const NOT_SCANNED = /[\\\x00-\x1f]/;
const QUOTE = 34;

/**
 * stringsAt for a text of the form `[{"k":"v","k2":null,...},...]` (string and null values only,
 * no whitespace, no backslash): without a backslash every quote ends a string, so a string's text is
 * the characters between two quotes. Null for any other text (stringsAt then parses it); an object's
 * repeated key counts once, as its last value, as JSON.parse keeps it.
 */
function scanStringsAt(t: string, key: string): string[] | null {
  const n = t.length;
  if (n === 0) return [];
  if (t.charCodeAt(0) !== 0x5b || NOT_SCANNED.test(t)) return null; // [
  const out: string[] = [];
  let p = 1;
  // `[]`, or text after it that no parse would take: no values either way.
  if (t.charCodeAt(p) === 0x5d) return out;
  for (;;) {
    if (t.charCodeAt(p++) !== 0x7b) return null; // {
    let found: string | null = null;
    if (t.charCodeAt(p) === 0x7d)
      p++; // } of an empty object
    else
      for (;;) {
        if (t.charCodeAt(p) !== QUOTE) return null;
        const nameEnd = t.indexOf('"', p + 1);
        if (nameEnd < 0 || t.charCodeAt(nameEnd + 1) !== 0x3a) return null; // :
        const isKey = nameEnd - p - 1 === key.length && t.startsWith(key, p + 1);
        p = nameEnd + 2;
        if (t.charCodeAt(p) === QUOTE) {
          const end = t.indexOf('"', p + 1);
          if (end < 0) return null;
          if (isKey) found = t.slice(p + 1, end);
          p = end + 1;
        } else if (t.startsWith('null', p)) {
          if (isKey) found = null;
          p += 4;
        } else return null;
        const c = t.charCodeAt(p++);
        if (c === 0x7d) break; // }
        if (c !== 0x2c) return null; // ,
      }
    if (found !== null) out.push(found);
    const c = t.charCodeAt(p++);
    if (c === 0x5d) return p === n ? out : null; // ]
    if (c !== 0x2c) return null; // ,
  }
}

export function toCompanyCore(c: Props): CompanyCore {
  return {
    vid: str(c.vid) ?? '',
    cid_id: str(c.cid_id) ?? '',
    name: str(c.name) ?? '',
    company_legal_name: str(c.company_legal_name),
    description: str(c.description),
    domains: strings(c.domains),
    websites: strings(c.websites),
    count_supplier_evidence: int(c.count_supplier_evidence),
    count_customer_evidence: int(c.count_customer_evidence),
    count_customers: int(c.count_customers),
    count_suppliers: int(c.count_suppliers),
  };
}

export function toIdentifier(i: Props): Identifier {
  return { type: str(i.type) ?? '', value: str(i.value) ?? '' };
}

/** The order of a profile's identifiers. */
export function byTypeThenValue(x: Identifier, y: Identifier): number {
  return x.type.localeCompare(y.type) || x.value.localeCompare(y.value);
}

export function toAddress(a: Props): Address {
  return {
    address_line: str(a.address_line),
    city: str(a.city),
    region: str(a.region),
    postal_code: str(a.postal_code),
    country: str(a.country),
    type: str(a.type),
  };
}

/** A `company/get-profile` row (identifiers and addresses as JSON columns). */
export function toProfile(c: Props): CompanyProfile {
  // Object.assign, not a spread of the core into a literal: V8 built that literal about six
  // times slower (15 against 2.5 microseconds a profile, measured on rows of the 1M store).
  return Object.assign(toCompanyCore(c), {
    identifiers: jsonList(c.identifiers).map(toIdentifier).sort(byTypeThenValue),
    addresses: jsonList(c.addresses).map(toAddress),
    domiciled_country: str(c.domiciled_country),
    incorporated_country: str(c.incorporated_country),
    incorporation_date: iso(c.incorporation_date),
    ipo_date: iso(c.ipo_date),
    is_active: bool(c.is_active),
    is_freight_forwarder: bool(c.is_freight_forwarder),
    is_public: bool(c.is_public),
    hq_phone_number: str(c.hq_phone_number),
    is_cluster_parent: bool(c.is_cluster_parent) ?? false,
    aliases: texts(c.aliases),
    industry: str(c.industry),
    industry_code_system: str(c.industry_code_system),
    industry_code: str(c.industry_code),
  });
}

export function toSummary(c: Props): CompanySummary {
  return {
    vid: str(c.vid) ?? '',
    name: str(c.name) ?? '',
    company_legal_name: str(c.company_legal_name),
    description: str(c.description),
    domains: strings(c.domains),
    country: str(c.country ?? c.domiciled_country),
    count_supplier_evidence: int(c.count_supplier_evidence),
    count_customer_evidence: int(c.count_customer_evidence),
    count_customers: int(c.count_customers),
    count_suppliers: int(c.count_suppliers),
  };
}

/** A row of the `relationship/list-*` queries with its counterpart (mapped from its `company/get-summary` row, or from a CounterpartLookup). */
export function withCounterpart(
  row: Props,
  counterpart: CompanySummary,
  grouping: 'company' | 'cluster',
): RelationshipItem {
  return {
    counterpart,
    relationship: {
      confidence_score: num(row.confidence_score) ?? 0,
      latest_relationship_date: iso(row.latest_relationship_date),
      relationship_type: grouping === 'cluster' ? 'cluster_edge' : 'edge',
      relationship_id: str(row.relationship_id) ?? '',
      edge_ids: strings(row.edge_ids),
    },
    evidences: { evidence_types: strings(row.evidence_types) },
  };
}

export function toEvidence(e: Props): Evidence {
  return {
    id: str(e.id) ?? '',
    date: iso(e.date),
    type: str(e.type),
    url: str(e.url),
    domain: str(e.domain),
    status_id: num(e.status_id),
    provided_by_customer: bool(e.provided_by_customer),
    metadata: str(e.metadata),
    finalised_on: iso(e.finalised_on),
    created_on: iso(e.created_on),
    last_modified_on: iso(e.last_modified_on),
  };
}

/**
 * One evidence item of the staged form, its values in EVIDENCE_FIELDS order (a test holds the two
 * in step). Written out as one literal: an object filled field by field from the list of names
 * took V8's slow path, most of an edge read's mapping time.
 */
export function evidenceFromArray(item: readonly unknown[]): Props {
  return {
    id: item[0],
    date: item[1],
    type: item[2],
    url: item[3],
    domain: item[4],
    status_id: item[5],
    provided_by_customer: item[6],
    metadata: item[7],
    finalised_on: item[8],
    created_on: item[9],
    last_modified_on: item[10],
  };
}

/**
 * The evidence items of an Edge.evidences value: positional arrays (the staged
 * form, see EVIDENCE_FIELDS) or objects with the same field names.
 */
export function evidenceItems(v: unknown): Props[] {
  let list: unknown = v;
  if (typeof v === 'string') {
    try {
      list = v === '' ? [] : JSON.parse(v);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  const out: Props[] = [];
  for (const item of list as unknown[]) {
    if (Array.isArray(item)) {
      out.push(evidenceFromArray(item));
    } else if (typeof item === 'object' && item !== null) {
      out.push(item as Props);
    }
  }
  return out;
}

/** An `edge/get` row; evidence newest first, then by id, whatever order it was stored in. */
export function toEdge(e: Props): EdgeRecord {
  const items = evidenceItems(e.evidences).map(toEvidence);
  items.sort((a, b) => (b.date ?? '').localeCompare(a.date ?? '') || a.id.localeCompare(b.id));
  return {
    edge_id: str(e.edge_id) ?? '',
    supplier_id: str(e.supplier_id) ?? '',
    customer_id: str(e.customer_id) ?? '',
    label: str(e.label) ?? 'supply',
    status_code: num(e.status_code),
    latest_edge_date: iso(e.latest_edge_date),
    latest_finalized_edge_date: iso(e.latest_finalized_edge_date),
    last_modified_on: iso(e.last_modified_on),
    confidence_score: num(e.confidence_score) ?? 0,
    hs_codes: strings(e.hs_codes),
    evidences: items,
  };
}

/**
 * A tier-walk relationship row between two companies of the walk. Its cluster
 * edge id is the id of the cluster relationship that covers it,
 * `<supplier cid_id>~<customer cid_id>`, or null inside one cluster.
 */
export function toTierRelationship(r: Props, supplier: TierCompany, customer: TierCompany): TierRelationship {
  return tierRelationship(
    {
      edge_id: str(r.edge_id) ?? '',
      confidence_score: num(r.confidence_score),
      status_code: r.status_code === null || r.status_code === undefined ? null : int(r.status_code),
      hs_codes: strings(r.hs_codes),
      evidence_types: strings(r.evidence_types),
      latest_evidence_date: iso(r.latest_evidence_date)?.slice(0, 10) ?? null,
    },
    supplier,
    customer,
  );
}

/** A tier-walk row from fields already in their domain form; the cluster relationship follows from the two companies. */
export function tierRelationship(
  fields: Omit<TierRelationship, 'supplier' | 'customer' | 'cluster_edge_id'>,
  supplier: TierCompany,
  customer: TierCompany,
): TierRelationship {
  return {
    supplier,
    customer,
    edge_id: fields.edge_id,
    confidence_score: fields.confidence_score,
    status_code: fields.status_code,
    hs_codes: fields.hs_codes,
    evidence_types: fields.evidence_types,
    latest_evidence_date: fields.latest_evidence_date,
    cluster_edge_id: supplier.cid_id === customer.cid_id ? null : `${supplier.cid_id}~${customer.cid_id}`,
  };
}

/** A company reached by a tier walk (or its root, at tier 0). */
export function toTierCompany(r: Props, tier: number): TierCompany {
  return {
    vid: str(r.vid) ?? '',
    tier,
    name: str(r.name) ?? '',
    company_legal_name: str(r.company_legal_name),
    cid_id: str(r.cid_id) ?? str(r.vid) ?? '',
    domiciled_country: str(r.domiciled_country),
    websites: strings(r.websites),
    is_public: bool(r.is_public),
    industry: str(r.industry),
    industry_code_system: str(r.industry_code_system),
    industry_code: str(r.industry_code),
    count_suppliers: int(r.count_suppliers),
    count_customers: int(r.count_customers),
  };
}

/**
 * A `search/scan-companies` row as the search index keeps it: a company's properties, with what it
 * derives from them (so that a staged row, as the store would give it, is derived the same way).
 */
export function toSearchRow(r: Props): SearchRow {
  const parent = r.is_cluster_parent === true;
  const size = num(r.cluster_size);
  const suppliers = num(r.count_suppliers);
  const customers = num(r.count_customers);
  const { name, aliases } = toSearchName(r);
  return {
    core: toCompanyCore(r),
    vid: str(r.vid) ?? '',
    name,
    // Cluster parents and companies in a cluster of one.
    searchedByDefault: parent || size === 1,
    isClusterParent: parent && size !== null && size > 1,
    aliases,
    industry: str(r.industry),
    industryCode: str(r.industry_code),
    industryCodeSystem: str(r.industry_code_system),
    // Unknown when either count is (as the sum is in Cypher).
    degree: suppliers === null || customers === null ? 0 : suppliers + customers,
    country: str(r.domiciled_country),
    hosts: hostsOf([...strings(r.domains), ...strings(r.websites)]),
    cities: stringsAt(r.addresses, 'city'),
    identifierValues: stringsAt(r.identifiers, 'value'),
  };
}

/** The names of a company row as toSearchRow gives them. */
export function toSearchName(r: Props): SearchName {
  return { name: str(r.name) ?? '', aliases: texts(r.aliases) };
}

/** A `path/step-*` row: one relationship from a frontier company to the company it reaches. */
export function toPathStep(r: Props): PathStep {
  return {
    from: str(r.from_vid) ?? '',
    to: str(r.to_vid) ?? '',
    edge_id: str(r.edge_id) ?? '',
    confidence_score: num(r.confidence_score),
    latest_evidence_date: iso(r.latest_evidence_date),
    toDegree: int(r.to_degree),
  };
}

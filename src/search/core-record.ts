import type { CompanyCore } from '../domain/model';

/**
 * A company's search-result fields as the search index keeps them: their values only, in the order
 * of CompanyCore. The index parses one of these for every search result and for every counterpart of
 * a list page it answers; as an array, a record is about a third shorter than the object's JSON, and
 * parsing it and filling one literal takes about half the time of parsing the object (0.85 against
 * 1.6 microseconds at 1M companies), since JSON.parse need not build an object key by key.
 */
export type CoreRecord = [
  vid: string,
  cid_id: string,
  name: string,
  company_legal_name: string | null,
  description: string | null,
  domains: string[],
  websites: string[],
  count_supplier_evidence: number,
  count_customer_evidence: number,
  count_customers: number,
  count_suppliers: number,
];

export function coreRecord(c: CompanyCore): CoreRecord {
  return [
    c.vid,
    c.cid_id,
    c.name,
    c.company_legal_name,
    c.description,
    c.domains,
    c.websites,
    c.count_supplier_evidence,
    c.count_customer_evidence,
    c.count_customers,
    c.count_suppliers,
  ];
}

/** The core a record was made of; a new object on every call, which the caller may keep or change. */
export function coreOfRecord(r: CoreRecord): CompanyCore {
  return {
    vid: r[0],
    cid_id: r[1],
    name: r[2],
    company_legal_name: r[3],
    description: r[4],
    domains: r[5],
    websites: r[6],
    count_supplier_evidence: r[7],
    count_customer_evidence: r[8],
    count_customers: r[9],
    count_suppliers: r[10],
  };
}

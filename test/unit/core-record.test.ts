import { coreOfRecord, coreRecord } from '../../src/search/core-record';
import type { CoreRecord } from '../../src/search/core-record';
import { toCompanyCore } from '../../src/store/mappers';

describe('core records of the search index', () => {
  const core = toCompanyCore({
    vid: 'c1',
    cid_id: 'k1',
    name: 'Nordwind Präzision 株式会社',
    company_legal_name: 'Nordwind Präzision GmbH',
    description: 'Makes "bearings", and more.',
    domains: ['nordwind.de', 'nordwind.example'],
    websites: ['https://nordwind.de'],
    count_supplier_evidence: 1,
    count_customer_evidence: 2,
    count_customers: 3,
    count_suppliers: 4,
  });

  it('gives back every field of the core, in the same order, through JSON', () => {
    const back = coreOfRecord(JSON.parse(JSON.stringify(coreRecord(core))) as CoreRecord);
    expect(back).toEqual(core);
    // Same keys in the same order as the mapper's: a field added to one and not the other fails here.
    expect(Object.keys(back)).toEqual(Object.keys(core));
  });

  it('keeps nulls and empty lists as they are', () => {
    const bare = toCompanyCore({ vid: 'c2', name: 'Bare' });
    expect(bare.company_legal_name).toBeNull();
    expect(coreOfRecord(JSON.parse(JSON.stringify(coreRecord(bare))) as CoreRecord)).toEqual(bare);
  });

  it('is shorter than the object it stands for', () => {
    expect(JSON.stringify(coreRecord(core)).length).toBeLessThan(JSON.stringify(core).length * 0.75);
  });
});

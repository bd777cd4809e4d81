import { parseTierViewRequest } from '../../src/domain/tierview';
import { droppedMessage, NO_RELATIONSHIPS, successMessage } from '../../src/services/tierview.service';

const base = { root_nodes: 'boeing', num_tiers: '2', direction: 'supplier' };

function fieldErrors(body: Record<string, unknown>): string[] {
  try {
    parseTierViewRequest(body, 6);
  } catch (e) {
    return ((e as { fieldErrors?: { field: string }[] }).fieldErrors ?? []).map((x) => x.field);
  }
  throw new Error('accepted');
}

describe('tier-view filters beyond the spec', () => {
  it('leaves a request without them exactly as before', () => {
    const r = parseTierViewRequest(base, 6);
    expect(Object.keys(r).sort()).toEqual(
      [
        'callback_url',
        'direction',
        'min_evid_date',
        'num_tiers',
        'output_multiple_tables',
        'root_nodes',
      ].sort(),
    );
    expect(
      parseTierViewRequest({ ...base, min_confidence: null, countries: '', max_companies_per_tier: null }, 6),
    ).toEqual(r);
  });

  it('reads the filters as numbers or text and countries as codes or names', () => {
    const r = parseTierViewRequest(
      {
        ...base,
        min_confidence: '0.5',
        countries: ['Deutschland', 'jpn', 'KR', 'Germany'],
        max_companies_per_tier: 10,
      },
      6,
    );
    expect(r.min_confidence).toBe(0.5);
    expect(r.countries).toEqual(['DE', 'JP', 'KR']);
    expect(r.max_companies_per_tier).toBe(10);
    expect(
      parseTierViewRequest({ ...base, countries: 'US, South Korea', min_confidence: 1 }, 6),
    ).toMatchObject({
      countries: ['KR', 'US'],
      min_confidence: 1,
    });
  });

  it.each([
    ['min_confidence', 1.5],
    ['min_confidence', -0.1],
    ['min_confidence', 'high'],
    ['countries', ['Atlantis']],
    ['countries', []],
    ['countries', [3]],
    ['countries', 42],
    ['max_companies_per_tier', 0],
    ['max_companies_per_tier', 2.5],
    ['max_companies_per_tier', 100_001],
    ['max_companies_per_tier', 'many'],
  ])('refuses %s = %j with a 400 naming the field', (field, value) => {
    expect(fieldErrors({ ...base, [field]: value })).toEqual([field]);
  });

  it('says how many companies each tier left out, and nothing when none were', () => {
    expect(droppedMessage({})).toBe('');
    expect(droppedMessage({ 2: 1, 1: 2 })).toBe(
      'max_companies_per_tier left out 3 companies (tier 1: 2, tier 2: 1)',
    );
    expect(droppedMessage({ 1: 1 })).toBe('max_companies_per_tier left out 1 company (tier 1: 1)');
  });

  it('says nothing of a run with rows and nothing left out, and names a run without a relationship', () => {
    expect(successMessage({ rows: 12, dropped: {} })).toBe('');
    expect(successMessage({ rows: 12, dropped: { 1: 2 } })).toBe(droppedMessage({ 1: 2 }));
    expect(successMessage({ rows: 0, dropped: {} })).toBe(NO_RELATIONSHIPS);
  });
});

describe('the root of a tier-view request', () => {
  const reasons = (root_nodes: unknown) => {
    try {
      parseTierViewRequest({ ...base, root_nodes }, 6);
    } catch (e) {
      return ((e as { fieldErrors?: { reason: string }[] }).fieldErrors ?? []).map((x) => x.reason);
    }
    throw new Error('accepted');
  };

  it('tells a root that is missing from one that is not a string', () => {
    for (const missing of [undefined, null, '', '  '])
      expect(reasons(missing)).toEqual(['is required: the vid of the root company']);
    for (const wrong of [['boeing'], 42, { vid: 'boeing' }])
      expect(reasons(wrong)).toEqual(['must be a string: the vid of one root company (one root per run)']);
  });

  it('takes the vid and the number of tiers as published: nothing around them', () => {
    for (const padded of [' boeing', 'boeing ', 'boeing\n', 'a/b'])
      expect(reasons(padded)).toEqual([
        'must be one company vid (letters, digits, . _ or -, nothing around it)',
      ]);
    // Every vid an import accepts can be exported.
    expect(parseTierViewRequest({ ...base, root_nodes: 'acme.de-1_x' }, 6).root_nodes).toBe('acme.de-1_x');
    for (const num_tiers of [' 2', '2 ', '+2', '2.0'])
      expect(fieldErrors({ ...base, num_tiers })).toEqual(['num_tiers']);
    expect(parseTierViewRequest({ ...base, num_tiers: 2 }, 6).num_tiers).toBe(2);
  });
});

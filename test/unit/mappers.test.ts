import type { TierCompany } from '../../src/domain/tier-walk';
import {
  evidenceFromArray,
  evidenceItems,
  iso,
  isoAsIs,
  isoOfTime,
  jsonList,
  stringsAt,
  toEdge,
  toProfile,
  toTierRelationship,
} from '../../src/store/mappers';
import { EVIDENCE_FIELDS } from '../../src/store/tables';
import { buildTierCompany } from '../support/factories';

const company = (vid: string, cid: string): TierCompany => buildTierCompany({ vid, cid_id: cid });

describe('toTierRelationship', () => {
  it('names the cluster relationship covering it: supplier cluster ~ customer cluster, none inside one cluster', () => {
    const row = {
      edge_id: 'e1',
      confidence_score: 0.5,
      status_code: 1,
      hs_codes: '[]',
      evidence_types: '[text]',
    };
    expect(toTierRelationship(row, company('s', 'K1'), company('c', 'c')).cluster_edge_id).toBe('K1~c');
    expect(toTierRelationship(row, company('c', 'c'), company('s', 'K1')).cluster_edge_id).toBe('c~K1');
    expect(toTierRelationship(row, company('a', 'K1'), company('b', 'K1')).cluster_edge_id).toBeNull();
  });
});

describe('evidenceItems', () => {
  const positional = [
    'v1',
    '2021-01-01',
    'text',
    'https://x.example.com/a',
    'x.example.com',
    1,
    true,
    'm',
    null,
    null,
    '2021-01-02T03:04:05Z',
  ];
  const named = {
    id: 'v1',
    date: '2021-01-01',
    type: 'text',
    url: 'https://x.example.com/a',
    domain: 'x.example.com',
    status_id: 1,
    provided_by_customer: true,
    metadata: 'm',
    finalised_on: null,
    created_on: null,
    last_modified_on: '2021-01-02T03:04:05Z',
  };

  it('reads staged positional items, and the named form of graphs imported before', () => {
    expect(evidenceItems(JSON.stringify([positional]))).toEqual([named]);
    expect(evidenceItems(JSON.stringify([named]))).toEqual([named]);
    expect(evidenceItems([positional, named])).toEqual([named, named]);
  });

  it('reads nothing from a blank, malformed or non-list value', () => {
    expect(evidenceItems('')).toEqual([]);
    expect(evidenceItems('[["v1"')).toEqual([]);
    expect(evidenceItems('{"id":"v1"}')).toEqual([]);
    expect(evidenceItems(null)).toEqual([]);
    expect(evidenceItems('[1,"x",null]')).toEqual([]);
  });

  it('gives an edge its items with full timestamps, newest first', () => {
    const older = ['v0', '2020-05-05', 'filing', null, null, null, null, null, null, null, null];
    const e = toEdge({ edge_id: 'e1', evidences: JSON.stringify([older, positional]) });
    expect(e.evidences.map((v) => [v.id, v.date, v.last_modified_on])).toEqual([
      ['v1', '2021-01-01T00:00:00.000Z', '2021-01-02T03:04:05.000Z'],
      ['v0', '2020-05-05T00:00:00.000Z', null],
    ]);
  });
});

describe('toProfile', () => {
  // A company/get-profile row as the embedded engine and the point-read file give it.
  const row = {
    vid: 'ckjmdax',
    cid_id: 'ckjmdax',
    name: 'Crown Electronics GmbH & Co. KG',
    company_legal_name: 'Crown Electronics GmbH & Co. KG',
    description: 'Assembles electronic modules.',
    domains: '[crown.de]',
    websites: '[https://www.crown.de]',
    count_supplier_evidence: 4,
    count_customer_evidence: 5,
    count_customers: 2,
    count_suppliers: 3,
    domiciled_country: 'Germany',
    incorporated_country: 'Germany',
    incorporation_date: '1991-08-23T00:00:00.000Z',
    ipo_date: null,
    is_active: true,
    is_freight_forwarder: false,
    is_public: false,
    hq_phone_number: null,
    is_cluster_parent: null,
    identifiers: '[{"type":"Wikidata","value":"Q1"},{"type":"PermID","value":"44"}]',
    addresses:
      '[{"address_line":"Hafenstraße 26","city":"München","country":"Germany","type":"headquarters"}]',
    aliases: '[Crown%2C Munich,CE]',
    industry: 'Electronics',
    industry_code_system: null,
    industry_code: null,
  };

  it('maps every field of the row, core fields first, identifiers sorted', () => {
    const p = toProfile(row);
    expect(p).toEqual({
      vid: 'ckjmdax',
      cid_id: 'ckjmdax',
      name: 'Crown Electronics GmbH & Co. KG',
      company_legal_name: 'Crown Electronics GmbH & Co. KG',
      description: 'Assembles electronic modules.',
      domains: ['crown.de'],
      websites: ['https://www.crown.de'],
      count_supplier_evidence: 4,
      count_customer_evidence: 5,
      count_customers: 2,
      count_suppliers: 3,
      identifiers: [
        { type: 'PermID', value: '44' },
        { type: 'Wikidata', value: 'Q1' },
      ],
      addresses: [
        {
          address_line: 'Hafenstraße 26',
          city: 'München',
          region: null,
          postal_code: null,
          country: 'Germany',
          type: 'headquarters',
        },
      ],
      domiciled_country: 'Germany',
      incorporated_country: 'Germany',
      incorporation_date: '1991-08-23T00:00:00.000Z',
      ipo_date: null,
      is_active: true,
      is_freight_forwarder: false,
      is_public: false,
      hq_phone_number: null,
      is_cluster_parent: false,
      aliases: ['Crown, Munich', 'CE'],
      industry: 'Electronics',
      industry_code_system: null,
      industry_code: null,
    });
    expect(Object.keys(p).slice(0, 3)).toEqual(['vid', 'cid_id', 'name']);
  });
});

describe('evidenceFromArray', () => {
  it('names the values of a staged item as EVIDENCE_FIELDS orders them', () => {
    const item = evidenceFromArray(EVIDENCE_FIELDS.map((_, i) => i));
    expect(Object.keys(item)).toEqual([...EVIDENCE_FIELDS]);
    expect(Object.values(item)).toEqual(EVIDENCE_FIELDS.map((_, i) => i));
  });
});

describe('iso of a text', () => {
  // What iso did before it recognised texts already in the form: parse, then print.
  const parsed = (s: string) => {
    const d = new Date(s);
    return Number.isNaN(d.getTime()) ? s : d.toISOString();
  };
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  /** iso gives what parsing gives for every text, and more than `recognised` of them skip the parse. */
  const expectAsParsed = (texts: string[], recognised: number) => {
    expect(texts.filter((s) => iso(s) !== parsed(s))).toEqual([]);
    // Without this the test would pass on the parse alone.
    expect(texts.filter((s) => isoAsIs(s) !== null).length).toBeGreaterThan(recognised);
  };

  it('gives what parsing and printing give, for every day of 1600-2400 and days that do not exist', () => {
    const texts: string[] = [];
    for (let year = 1600; year <= 2400; year++) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) texts.push(`${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`);
      }
    }
    texts.push(
      '0000-01-01',
      '0000-02-29',
      '0099-02-29',
      '9999-12-31',
      '2025-1-01',
      '2025/01/01',
      '202a-01-01',
    );
    expectAsParsed(texts, 290_000);
  });

  it('gives what parsing and printing give for times, in range or not', () => {
    const texts: string[] = [];
    for (const day of ['2024-02-29', '2025-02-29', '2025-04-31', '1999-12-31', '2025-06-15']) {
      for (let hour = 0; hour <= 25; hour++) {
        for (const minute of [0, 1, 30, 59, 60, 61]) {
          for (const second of [0, 59, 60, 99]) {
            for (const ms of ['000', '001', '999']) {
              texts.push(`${day}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${ms}Z`);
            }
          }
        }
      }
    }
    texts.push(
      '2025-06-15T08:05:00.000+01:00',
      '2025-06-15T08:05:00Z',
      '2025-06-15 08:05:00.000Z',
      '2025-06-15T08:05:00.00aZ',
      '2025-06-15T08:05:00,000Z',
      '',
      'not a date',
    );
    expectAsParsed(texts, 1_000);
  });
});

describe('isoOfTime', () => {
  const DAY = 86_400_000;
  const printed = (t: number) => (Number.isNaN(t) ? null : new Date(t).toISOString());

  it('writes every day at midnight as a Date prints it, in years 0 to 9999', () => {
    const first = Date.UTC(1500, 0, 1) / DAY;
    const last = Date.UTC(2600, 11, 31) / DAY;
    const wrong: number[] = [];
    for (let d = first; d <= last; d++) if (isoOfTime(d * DAY) !== printed(d * DAY)) wrong.push(d);
    // The rest of the range, every 7th day (all weekdays, months and leap years come round).
    for (let d = -719_528; d <= 2_932_896; d += 7) if (isoOfTime(d * DAY) !== printed(d * DAY)) wrong.push(d);
    expect(wrong).toEqual([]);
  });

  it('prints other times, times beyond year 9999 and NaN as a Date does', () => {
    const times = [
      NaN,
      0,
      1,
      -1,
      DAY - 1,
      Date.UTC(2025, 5, 15, 8, 5, 0, 1),
      Date.UTC(-1, 0, 1),
      -719_529 * DAY,
      2_932_897 * DAY,
      8.64e15,
      -8.64e15,
    ];
    expect(times.map(isoOfTime)).toEqual(times.map(printed));
  });
});

describe('stringsAt', () => {
  /** What stringsAt stands for: every object's `key`, where it is a string. */
  const parsed = (v: unknown, key: string): string[] =>
    jsonList(v).flatMap((o) => (typeof o[key] === 'string' ? [o[key]] : []));

  const staged = [
    '',
    '[]',
    '[{"type":"duns","value":"123456789"}]',
    '[{"type":"duns","value":"1"},{"type":"lei","value":"Ünïcødé – 名前 😀"}]',
    '[{"address_line":"1 Main St","city":"Berlin","region":null,"postal_code":"10115","country":"Germany","type":"hq"},{"address_line":null,"city":null,"region":"BY","postal_code":null,"country":null,"type":null}]',
    '[{"city":"a"},{},{"city":""}]',
    // A key given twice: JSON.parse keeps its last value, a null included.
    '[{"city":"first","city":"second"},{"city":"x","city":null},{"city":null,"city":"y"}]',
    // Names that hold the key, or that it holds.
    '[{"cityx":"no","xcity":"no","cit":"no","city":"yes"}]',
    '[{"city":"yes","cityx":"no","xcity":"no","cit":"no"}]',
  ];

  it('reads the staged form without parsing it, as parsing would', () => {
    for (const text of staged)
      for (const key of ['city', 'value', 'type', 'nothing']) {
        const expected = parsed(text, key);
        const parse = jest.spyOn(JSON, 'parse');
        const got = stringsAt(text, key);
        expect(parse).not.toHaveBeenCalled();
        parse.mockRestore();
        expect(got).toEqual(expected);
      }
  });

  it('gives what parsing gives for any other text, and for lists already parsed', () => {
    const others: unknown[] = [
      '[{"city":"a\\"b"}]',
      '[{"city":"caf\\u00e9"}]',
      '[ {"city":"spaced"} ]',
      '[{"city" :"a"}]',
      '[{"city":1},{"city":true},{"city":false},{"city":"ok"}]',
      '[{"city":{"city":"nested"}},{"city":["x"]},{"a":{"b":1},"city":"after"}]',
      '["city",null,1,[{"city":"deep"}],{"city":"top"}]',
      '{"city":"not a list"}',
      '"[]"',
      'null',
      '[{"city":"tab\there"}]',
      '[{"city":"line\nbreak"}]',
      '[{"city":"a"}]trailing',
      '[{"city":"a"}],',
      '[{"city":"a"},]',
      '[{"city":"a",}]',
      '[{"city"}]',
      '[{city:"a"}]',
      'not json',
      [{ city: 'parsed' }, { city: null }, 'x', null, { city: 3 }],
      { city: 'object' },
      null,
      undefined,
      42,
    ];
    for (const v of others)
      for (const key of ['city', 'value']) expect(stringsAt(v, key)).toEqual(parsed(v, key));
  });

  it('agrees with parsing on every cut and every one-character change of a staged text', () => {
    const texts = [staged[4]!, staged[6]!, '[{"type":"a","value":"b"},{"type":"c","value":"d"}]'];
    const alphabet = ['', '"', ',', ':', '{', '}', '[', ']', ' ', 'n', 'null', '\\', '\n', 'x', '1'];
    let compared = 0;
    for (const text of texts) {
      for (let i = 0; i <= text.length; i++) {
        const cut = text.slice(0, i);
        expect(stringsAt(cut, 'city')).toEqual(parsed(cut, 'city'));
        for (const c of alphabet) {
          const changed = text.slice(0, i) + c + text.slice(i + 1);
          for (const key of ['city', 'value', 'type']) {
            expect(stringsAt(changed, key)).toEqual(parsed(changed, key));
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });
});

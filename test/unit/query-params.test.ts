import { AppError } from '../../src/domain/errors';
import { evidenceAfter, isoDate } from '../../src/domain/params';
import type { GraphQLContext } from '../../src/graphql/context';
import { buildSchema } from '../../src/graphql/schema';
import { runOperation } from '../../src/rest/execute';
import { OPERATIONS } from '../../src/rest/operations';
import { checkPathId, parseQuery } from '../../src/rest/query-params';

const spec = { name: 'string', limit: 'int', score: 'number', all: 'boolean' } as const;

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e.fieldErrors.map((f) => f.field);
    throw e;
  }
  throw new Error('expected a 400');
}

describe('parseQuery', () => {
  it('reads each kind', () => {
    expect(parseQuery({ name: 'x', limit: '5', score: '0.25', all: 'TRUE' }, spec)).toEqual({
      name: 'x',
      limit: 5,
      score: 0.25,
      all: true,
    });
    expect(parseQuery({ all: '0', score: '1e-1' }, spec)).toEqual({ all: false, score: 0.1 });
  });

  it('names every bad, unknown or repeated parameter', () => {
    expect(
      fieldsOf(() =>
        parseQuery({ limit: '5.5', score: 'NaN', all: 'maybe', extra: '1', name: ['a', 'b'] }, spec),
      ).sort(),
    ).toEqual(['query.all', 'query.extra', 'query.limit', 'query.name', 'query.score']);
  });

  it('refuses Infinity and hex', () => {
    expect(fieldsOf(() => parseQuery({ score: 'Infinity' }, spec))).toEqual(['query.score']);
    expect(fieldsOf(() => parseQuery({ limit: '0x10' }, spec))).toEqual(['query.limit']);
  });
});

describe('path ids and dates', () => {
  it('refuses empty, long and control-character ids', () => {
    expect(checkPathId('vid', 'abc')).toBe('abc');
    for (const bad of ['', 'x'.repeat(201), 'a\u0000b', 'a\nb'])
      expect(fieldsOf(() => checkPathId('vid', bad))).toEqual(['path.vid']);
  });

  it('accepts only real calendar dates', () => {
    expect(isoDate.safeParse('2024-02-29').success).toBe(true);
    for (const bad of ['2023-02-29', '2023-13-01', '2023-1-01', '20230101', '2023-01-01T00:00:00Z']) {
      expect([bad, isoDate.safeParse(bad).success]).toEqual([bad, false]);
    }
  });

  it('reads "later than a date" as from the start of the next day', () => {
    expect(evidenceAfter('2022-12-31')!.toISOString()).toBe('2023-01-01T00:00:00.000Z');
    expect(evidenceAfter(undefined)).toBeNull();
  });
});

describe('integers out of the range of GraphQL Int', () => {
  it('are refused by parseQuery with the range in the reason', () => {
    for (const raw of ['2147483648', '999999999999999', '-2147483649']) {
      expect(fieldsOf(() => parseQuery({ limit: raw }, spec))).toEqual(['query.limit']);
    }
    expect(parseQuery({ limit: '2147483647' }, spec)).toEqual({ limit: 2147483647 });
    expect(parseQuery({ limit: '-2147483648' }, spec)).toEqual({ limit: -2147483648 });
  });

  it('are a 400 naming the variable, not an internal error, when they reach an operation', async () => {
    const run = runOperation(
      buildSchema(),
      OPERATIONS.suppliers,
      { vid: 'boeing', offset: 2147483648, limit: 999999999999999 },
      {} as GraphQLContext,
    );
    const e: unknown = await run.catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('BAD_REQUEST');
    expect((e as AppError).fieldErrors.map((f) => f.field).sort()).toEqual(['limit', 'offset']);
  });
});

describe('path ids are measured in characters, as the OpenAPI document states them', () => {
  it('accepts 200 characters outside the basic plane and refuses 201', () => {
    expect(checkPathId('vid', '🙂'.repeat(200))).toBe('🙂'.repeat(200));
    expect(() => checkPathId('vid', '🙂'.repeat(201))).toThrow(AppError);
  });
});

describe('what parseQuery says is wrong', () => {
  const reasons = (query: Record<string, unknown>) => {
    try {
      parseQuery(query, spec);
    } catch (e) {
      return (e as AppError).fieldErrors.map((f) => `${f.field}: ${f.reason}`);
    }
    throw new Error('accepted');
  };

  it('tells a value that is no integer from one out of range, without a range the route does not take', () => {
    expect(reasons({ limit: 'abc' })).toEqual(['query.limit: must be an integer']);
    expect(reasons({ limit: '1.5' })).toEqual(['query.limit: must be an integer']);
    expect(reasons({ limit: '2147483648' })).toEqual([
      'query.limit: is out of range (-2147483648 to 2147483647)',
    ]);
  });

  it("takes an object's inherited names for unknown parameters", () => {
    for (const name of ['__proto__', 'toString', 'constructor', 'hasOwnProperty'])
      expect(reasons({ [name]: 'x' })).toEqual([
        `query.${name}: unknown parameter; accepted: name, limit, score, all`,
      ]);
  });
});

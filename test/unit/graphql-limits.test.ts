import { getIntrospectionQuery, parse, specifiedRules, validate } from 'graphql';
import { buildSchema } from '../../src/graphql/schema';
import { knownOperationTypesRule } from '../../src/graphql/known-operation-types';
import { checkLimits, queryLimitRule } from '../../src/graphql/limits';
import type { QueryLimits } from '../../src/graphql/limits';

const schema = buildSchema();
const limits: QueryLimits = { maxDepth: 8, maxCost: 20_000, maxPageSize: 100, validateMs: 1000 };

function messages(query: string, l: QueryLimits = limits): string[] {
  return checkLimits(schema, parse(query), l).map((e) => e.message);
}

/** F0 spreads F1 twice, F1 spreads F2 twice, ...: 2^levels expansions from a document of a few hundred bytes. */
function fanOut(levels: number): string {
  let q = 'query { company(vid: "boeing") { ...F0 } }\n';
  for (let i = 0; i < levels; i++) q += `fragment F${i} on Company { ...F${i + 1} ...F${i + 1} }\n`;
  return `${q}fragment F${levels} on Company { name }`;
}

describe('GraphQL query limits', () => {
  // 30 levels are 2^30 expansions: a check that walked them would take minutes and fail the bound,
  // which a check measuring each fragment once meets by a wide margin on any machine, however busy.
  it('measures each fragment once: a 30-level fan-out is refused at once, by cost', () => {
    const started = performance.now();
    const errors = messages(fanOut(30));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(errors).toEqual([
      expect.stringMatching(/^Query cost (\d+|beyond 1e15) exceeds the limit of 20000\.$/),
    ]);
    // A cost past what a number counts exactly is named as such.
    expect(messages(fanOut(60))).toEqual(['Query cost beyond 1e15 exceeds the limit of 20000.']);
  });

  it('keeps the whole of validation linear, graphql-js rules included', () => {
    const started = performance.now();
    const errors = validate(schema, parse(fanOut(30)), [...specifiedRules, queryLimitRule(limits)]);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(errors.map((e) => e.extensions.code)).toContain('QUERY_TOO_COMPLEX');
  });

  it('survives fragment cycles, which the specified rules report', () => {
    const q =
      'query { company(vid: "x") { ...A } } fragment A on Company { name ...B } fragment B on Company { ...A }';
    expect(messages(q)).toEqual([]);
    expect(
      validate(schema, parse(q))
        .map((e) => e.message)
        .join(),
    ).toMatch(/Cannot spread fragment/);
  });

  it('counts every alias: 2,300 aliased page reads are refused though each is small', () => {
    const fields = Array.from({ length: 2300 }, (_, i) => `a${i}: suppliers(limit: 1) { has_more }`).join(
      ' ',
    );
    expect(messages(`{ company(vid: "boeing") { ${fields} } }`)).toEqual([
      expect.stringMatching(/^Query cost \d+ exceeds/),
    ]);
    // The same number of plain fields reads nothing more from the store and stays within the cost.
    const plain = Array.from({ length: 2300 }, (_, i) => `a${i}: name`).join(' ');
    expect(messages(`{ company(vid: "boeing") { ${plain} } }`)).toEqual([]);
  });

  it('counts root fields as store reads', () => {
    const roots = Array.from({ length: 2100 }, (_, i) => `e${i}: edge(edge_id: "e1") { edge_id }`).join(' ');
    expect(messages(`{ ${roots} }`)).toEqual([expect.stringMatching(/^Query cost/)]);
  });

  it('multiplies by the page size: given, declared default, or the largest page for a variable', () => {
    const inner = '{ results { supplier { vid name } } }';
    expect(messages(`{ companies(limit: 100) { results { suppliers(limit: 100) ${inner} } } }`)).toEqual([
      expect.stringMatching(/^Query cost/),
    ]);
    expect(messages(`{ companies(limit: 20) { results { suppliers ${inner} } } }`)).toEqual([]);
    expect(
      messages(`query($n: Int) { companies(limit: 100) { results { suppliers(limit: $n) ${inner} } } }`),
    ).toEqual([expect.stringMatching(/^Query cost/)]);
  });

  it('counts a tier map by the companies it may draw: max_nodes given, its default, or 500 for a variable', () => {
    // What one map selects costs 1 + 8 (nodes) + 1 + 5 (edges) + 1 = 16; the map itself is one read (10).
    const fields =
      '{ nodes { vid name country tier count_suppliers count_customers expanded hidden } ' +
      'edges { relationship_id supplier_id customer_id confidence_score latest_relationship_date } hidden }';
    const costOf = (query: string) => {
      const [message] = messages(query, { ...limits, maxCost: 1 });
      return Number(/^Query cost (\d+)/.exec(message ?? '')?.[1]);
    };
    expect(costOf(`{ tierMap(vid: "boeing", max_nodes: 40) ${fields} }`)).toBe(10 + 40 * 16);
    expect(costOf(`{ tierMap(vid: "boeing") ${fields} }`)).toBe(10 + 150 * 16);
    expect(costOf(`query($m: Int) { tierMap(vid: "boeing", max_nodes: $m) ${fields} }`)).toBe(10 + 500 * 16);
    // Past its most, counted as its most: tierMap then refuses the value itself, naming max_nodes.
    expect(costOf(`{ tierMap(vid: "boeing", max_nodes: 100000) ${fields} }`)).toBe(10 + 500 * 16);
    // 180 aliased maps of 500 companies each, some 19 MB of answer, are refused; the app's own map
    // (its size in a variable) is not.
    const aliases = Array.from(
      { length: 180 },
      (_, i) => `m${i}: tierMap(vid: "v${i}", tiers: 3, per_node: 50, max_nodes: 500) ${fields}`,
    ).join(' ');
    expect(messages(`{ ${aliases} }`)).toEqual([expect.stringMatching(/^Query cost \d+ exceeds/)]);
    expect(messages(`query($m: Int) { tierMap(vid: "boeing", max_nodes: $m) ${fields} }`)).toEqual([]);
  });

  it('counts a search for chains between companies as the work its budget allows, not as one read', () => {
    const costOf = (query: string) => {
      const [message] = messages(query, { ...limits, maxCost: 1 });
      return Number(/^Query cost (\d+)/.exec(message ?? '')?.[1]);
    };
    // Its own work (PATH_SEARCH_COST), then what each of its `limit` chains selects.
    expect(costOf('{ paths(from: "a", to: "b") { length } }')).toBe(2000 + 10 * 1);
    expect(costOf('{ paths(from: "a", to: "b", limit: 50) { length } }')).toBe(2000 + 50 * 1);
    // Ten such searches in one document pass the default budget no more: each may read PATH_SEARCH_BUDGET
    // relationships on the thread that answers every request.
    const aliased = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `p${i}: paths(from: "a", to: "b", max_tiers: 6) { length }`).join(' ')} }`;
    expect(messages(aliased(9))).toEqual([]);
    expect(messages(aliased(10))).toEqual([
      expect.stringMatching(/^Query cost 20100 exceeds the limit of 20000\.$/),
    ]);
  });

  it('still refuses depth, through fragments too', () => {
    expect(
      messages(
        'fragment S on RelationshipPage { results { supplier { company { customers { results { customer { company { vid } } } } } } } } { company(vid: "boeing") { suppliers { ...S } } }',
      ),
    ).toEqual([expect.stringMatching(/^Query depth 10 exceeds/)]);
  });

  it('accepts the standard introspection query, with every option or none, even under a tight depth limit', () => {
    const tight = { ...limits, maxDepth: 3 };
    expect(messages(getIntrospectionQuery(), tight)).toEqual([]);
    const everything = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    expect(messages(everything, tight)).toEqual([]);
    expect(
      messages('{ __type(name: "Company") { name fields { name type { name kind ofType { name } } } } }'),
    ).toEqual([]);
  });

  it('keeps a budget for introspection: nested type references and many copies are refused', () => {
    const nested =
      '{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }';
    expect(messages(nested)).toEqual([expect.stringMatching(/^Introspection cost \d+ exceeds/)]);
    const standard = getIntrospectionQuery();
    const fragments = standard.slice(standard.indexOf('fragment FullType'));
    const copy = (i: number) =>
      `s${i}: __schema { types { ...FullType } directives { name args { ...InputValue } } }`;
    const copies = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => copy(i)).join(' ')} } ${fragments}`;
    expect(messages(copies(1))).toEqual([]);
    expect(messages(copies(5))).toEqual([expect.stringMatching(/^Introspection cost \d+ exceeds/)]);
  });

  it('refuses a document that takes longer than its budget to check', () => {
    const fields = Array.from({ length: 600 }, (_, i) => `a${i}: name`).join(' ');
    const document = parse(`{ company(vid: "boeing") { ${fields} } }`);
    expect(messages(`{ company(vid: "boeing") { ${fields} } }`)).toEqual([]);
    const errors = checkLimits(schema, document, { ...limits, validateMs: -1 });
    expect(errors.map((e) => [e.message, e.extensions.code])).toEqual([
      ['The query took more than -1 ms to check; send a simpler one.', 'QUERY_TOO_COMPLEX'],
    ]);
  });

  it('refuses subscriptions, which the schema does not define, at validation', () => {
    const errors = validate(schema, parse('subscription { company(vid: "x") { vid } }'), [
      knownOperationTypesRule,
    ]);
    expect(errors.map((e) => e.message)).toEqual(['This service does not support subscription operations.']);
    expect(
      validate(schema, parse('mutation { cancelJob(run_id: "1") { run_id } }'), [knownOperationTypesRule]),
    ).toEqual([]);
  });
});

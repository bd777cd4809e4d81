import {
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  GraphQLError,
  isCompositeType,
  isIntrospectionType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  parse,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
} from 'graphql';
import type {
  ASTVisitor,
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
} from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
  /** What a `limit` passed as a variable counts as: its value is not known when the document is checked. */
  maxPageSize: number;
  /** Wall-clock budget of validating one document, in milliseconds. */
  validateMs: number;
}

/**
 * What one selection set costs. `depth` is relative to where it is selected, so
 * a fragment's measure is the same wherever it is spread and is computed once.
 * Introspection is kept apart (`introspection`): its fields never reach the
 * store and nest type references deeply, so it has a budget of its own.
 */
interface Measure {
  depth: number;
  cost: number;
  introspection: number;
}

const ZERO: Measure = { depth: 0, cost: 0, introspection: 0 };

/**
 * A field that resolves to objects through a resolver of its own goes to the
 * store (a lookup or a page read): it costs this much on top of what it selects,
 * so aliasing one list field thousands of times is refused like one huge page.
 */
export const READ_COST = 10;

/**
 * Lists of the introspection types have no `limit`; a nested one is counted as
 * this many items, so that nesting type references inside type references
 * (`types { fields { type { fields ... } } }`) grows its cost as it grows its answer.
 */
const INTROSPECTION_LIST_ITEMS = 10;

/** Room for the introspection query variants of common tools above the standard one. */
const INTROSPECTION_HEADROOM = 2;

const LIMIT_ARG = 'limit';

/**
 * Refuses a query before it runs when it nests too deep, would read too much,
 * or takes too long to check. Cost: a field counts 1, a field read from the
 * store READ_COST, one with a `@work` directive the cost it names (a search with a
 * budget of its own); a field with a `limit` argument multiplies what it selects
 * by that limit (its declared default when not given), and so does one with a
 * `@sized` directive by the argument it names (schema/cost.graphql). Every alias and every
 * root field is counted; each fragment is measured once, so the work is linear
 * in the document's size whatever its spreads expand to.
 *
 * Walks the document itself rather than through graphql-js's validation, which
 * cannot be stopped midway and would first visit every node with type info.
 */
export function checkLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  limits: QueryLimits,
): GraphQLError[] {
  const measurer = new Measurer(schema, document, limits.maxPageSize, performance.now() + limits.validateMs);
  const errors: GraphQLError[] = [];
  try {
    for (const d of document.definitions) {
      if (d.kind !== Kind.OPERATION_DEFINITION) continue;
      const m = measurer.selectionSet(d.selectionSet, rootType(schema, d.operation));
      const message = overLimit(m, limits, introspectionBudgetOf(schema, limits.maxPageSize));
      if (message)
        errors.push(new GraphQLError(message, { nodes: [d], extensions: { code: 'QUERY_TOO_COMPLEX' } }));
    }
  } catch (e) {
    if (!(e instanceof OverBudget)) throw e;
    return [
      new GraphQLError(`The query took more than ${limits.validateMs} ms to check; send a simpler one.`, {
        extensions: { code: 'QUERY_TOO_COMPLEX' },
      }),
    ];
  }
  return errors;
}

/** The same limits as a graphql-js validation rule, without the time budget (a rule cannot stop validation). */
export function queryLimitRule(limits: Omit<QueryLimits, 'validateMs'>): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    Document(node) {
      for (const e of checkLimits(context.getSchema(), node, { ...limits, validateMs: Infinity })) {
        context.reportError(e);
      }
      return false;
    },
  });
}

function overLimit(m: Measure, limits: QueryLimits, introspectionBudget: number): string | null {
  if (m.depth > limits.maxDepth) return `Query depth ${m.depth} exceeds the limit of ${limits.maxDepth}.`;
  if (m.cost > limits.maxCost)
    return `Query cost ${formatCost(m.cost)} exceeds the limit of ${limits.maxCost}.`;
  if (m.introspection > introspectionBudget) {
    return `Introspection cost ${formatCost(m.introspection)} exceeds the limit of ${introspectionBudget}.`;
  }
  return null;
}

class OverBudget extends Error {}

function formatCost(cost: number): string {
  return Number.isFinite(cost) && cost < 1e15 ? String(Math.round(cost)) : 'beyond 1e15';
}

function rootType(schema: GraphQLSchema, operation: 'query' | 'mutation' | 'subscription') {
  return schema.getRootType(operation as Parameters<GraphQLSchema['getRootType']>[0]) ?? undefined;
}

/** Measures selection sets against the schema, remembering each fragment's measure. */
class Measurer {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  /** null: being measured (a cycle, which graphql-js's own rule reports). */
  private readonly measured = new Map<string, Measure | null>();

  private fieldsSeen = 0;

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    private readonly variableLimit: number,
    private readonly deadline = Infinity,
  ) {
    for (const d of document.definitions) {
      if (d.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(d.name.value, d);
    }
  }

  selectionSet(set: SelectionSetNode, parent: GraphQLNamedType | undefined): Measure {
    let depth = 0;
    let cost = 0;
    let introspection = 0;
    for (const sel of set.selections) {
      let m: Measure;
      if (sel.kind === Kind.FIELD) {
        m = this.field(sel, parent);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        m = this.selectionSet(sel.selectionSet, this.typeNamed(sel.typeCondition?.name.value) ?? parent);
      } else {
        m = this.fragment(sel.name.value);
      }
      depth = Math.max(depth, m.depth);
      cost += m.cost;
      introspection += m.introspection;
    }
    return { depth, cost, introspection };
  }

  private fragment(name: string): Measure {
    const known = this.measured.get(name);
    if (known !== undefined) return known ?? ZERO;
    const def = this.fragments.get(name);
    if (!def) return ZERO;
    this.measured.set(name, null);
    const m = this.selectionSet(def.selectionSet, this.typeNamed(def.typeCondition.name.value));
    this.measured.set(name, m);
    return m;
  }

  private field(node: FieldNode, parent: GraphQLNamedType | undefined): Measure {
    // The clock is read every few hundred fields: reading it costs more than measuring one.
    if (++this.fieldsSeen % 256 === 0 && performance.now() > this.deadline) throw new OverBudget();
    const def = fieldDef(this.schema, parent, node.name.value);
    const type = def ? getNamedType(def.type) : undefined;
    const child = node.selectionSet ? this.selectionSet(node.selectionSet, type) : ZERO;
    const introspective =
      def === SchemaMetaFieldDef ||
      def === TypeMetaFieldDef ||
      (parent !== undefined && isIntrospectionType(parent));
    if (introspective) {
      const items = def && isListType(getNullableType(def.type)) ? INTROSPECTION_LIST_ITEMS : 1;
      // Type references nest as deep as the types they describe: not counted as depth.
      return { depth: child.depth, cost: child.cost, introspection: 1 + items * child.introspection };
    }
    const reads =
      def !== undefined && def.resolve !== undefined && type !== undefined && isCompositeType(type);
    const own = (def && workCost(def)) ?? (reads ? READ_COST : 1);
    return {
      depth: 1 + child.depth,
      cost: own + this.pageSize(node, def) * child.cost,
      introspection: this.pageSize(node, def) * child.introspection,
    };
  }

  /**
   * Items a field returns per parent: the argument its `@sized` directive names, else its `limit`
   * argument; the value given, else that argument's default, else 1 when it has no such argument.
   */
  private pageSize(node: FieldNode, def: GraphQLField<unknown, unknown> | undefined): number {
    const sized = def && sizedBy(def);
    const name = sized?.by ?? LIMIT_ARG;
    const unknown = sized?.max ?? this.variableLimit;
    const given = node.arguments?.find((a) => a.name.value === name)?.value;
    // A sized field's value past its most is counted as its most: the field refuses it by name.
    if (given?.kind === Kind.INT) return Math.max(1, Math.min(sized?.max ?? Infinity, Number(given.value)));
    if (given?.kind === Kind.VARIABLE) return unknown;
    const arg = def?.args.find((a) => a.name === name);
    if (!arg) return 1;
    return typeof arg.defaultValue === 'number' ? Math.max(1, arg.defaultValue) : unknown;
  }

  private typeNamed(name: string | undefined): GraphQLNamedType | undefined {
    return name === undefined ? undefined : this.schema.getType(name);
  }
}

const WORK = 'work';
const works = new WeakMap<GraphQLField<unknown, unknown>, number | null>();

/** A field's `@work(cost)` directive (schema/cost.graphql): its own cost, in place of READ_COST. */
function workCost(def: GraphQLField<unknown, unknown>): number | null {
  let known = works.get(def);
  if (known === undefined) {
    const cost = def.astNode?.directives
      ?.find((d) => d.name.value === WORK)
      ?.arguments?.find((a) => a.name.value === 'cost')?.value;
    known = cost?.kind === Kind.INT ? Number(cost.value) : null;
    works.set(def, known);
  }
  return known;
}

const SIZED = 'sized';
const sizes = new WeakMap<GraphQLField<unknown, unknown>, { by: string; max: number } | null>();

/** A field's `@sized(by, max)` directive (schema/cost.graphql), read once per field. */
function sizedBy(def: GraphQLField<unknown, unknown>): { by: string; max: number } | null {
  let known = sizes.get(def);
  if (known === undefined) {
    const directive = def.astNode?.directives?.find((d) => d.name.value === SIZED);
    const by = directive?.arguments?.find((a) => a.name.value === 'by')?.value;
    const max = directive?.arguments?.find((a) => a.name.value === 'max')?.value;
    known =
      by?.kind === Kind.STRING && max?.kind === Kind.INT ? { by: by.value, max: Number(max.value) } : null;
    sizes.set(def, known);
  }
  return known;
}

function fieldDef(
  schema: GraphQLSchema,
  parent: GraphQLNamedType | undefined,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (name === '__typename') return TypeNameMetaFieldDef;
  if (parent === schema.getQueryType()) {
    if (name === '__schema') return SchemaMetaFieldDef;
    if (name === '__type') return TypeMetaFieldDef;
  }
  if (parent && (isObjectType(parent) || isInterfaceType(parent))) return parent.getFields()[name];
  return undefined;
}

const introspectionBudgets = new WeakMap<GraphQLSchema, number>();

/**
 * Twice what the standard introspection query (every option on) measures on
 * this schema: what GraphQL tools send is always accepted, while many copies
 * of it, or type references nested to list the schema over and over, are not.
 */
function introspectionBudgetOf(schema: GraphQLSchema, variableLimit: number): number {
  const known = introspectionBudgets.get(schema);
  if (known !== undefined) return known;
  const document = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
  );
  let measured = 0;
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) {
      measured += new Measurer(schema, document, variableLimit).selectionSet(
        d.selectionSet,
        schema.getQueryType() ?? undefined,
      ).introspection;
    }
  }
  const budget = Math.ceil(measured * INTROSPECTION_HEADROOM);
  introspectionBudgets.set(schema, budget);
  return budget;
}

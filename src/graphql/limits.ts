import { GraphQLError, Kind } from 'graphql';
import type {
  ASTVisitor,
  FragmentDefinitionNode,
  SelectionSetNode,
  ValidationContext,
  ValueNode,
} from 'graphql';

/**
 * Validation rules that refuse a query before it runs when it nests too deep
 * or would touch too many objects. Cost: every field counts 1; a field with a
 * `limit` argument multiplies the cost of what it selects by that limit (its
 * default, 10, when not given), so nested lists cannot explode unnoticed.
 */
export function queryLimitRules(maxDepth: number, maxCost: number) {
  return [
    (context: ValidationContext): ASTVisitor => ({
      OperationDefinition(node) {
        const fragments = new Map<string, FragmentDefinitionNode>();
        for (const d of context.getDocument().definitions) {
          if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
        }
        const variables = context.getDocument() && collectVariableDefaults(node.variableDefinitions ?? []);
        const { depth, cost } = measure(node.selectionSet, fragments, variables, 0, new Set());
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`Query depth ${depth} exceeds the limit of ${maxDepth}.`, {
              extensions: { code: 'QUERY_TOO_COMPLEX' },
            }),
          );
        } else if (cost > maxCost) {
          context.reportError(
            new GraphQLError(`Query cost ${cost} exceeds the limit of ${maxCost}.`, {
              extensions: { code: 'QUERY_TOO_COMPLEX' },
            }),
          );
        }
      },
    }),
  ];
}

function collectVariableDefaults(
  defs: readonly { variable: { name: { value: string } }; defaultValue?: ValueNode }[],
): Map<string, ValueNode | undefined> {
  return new Map(defs.map((d) => [d.variable.name.value, d.defaultValue]));
}

const DEFAULT_LIMIT = 10;

function limitOf(args: readonly { name: { value: string }; value: ValueNode }[] | undefined): number {
  const arg = args?.find((a) => a.name.value === 'limit');
  if (!arg) return 1;
  // A limit passed as a variable is not known at validation time: count the largest page.
  if (arg.value.kind === Kind.INT) return Math.max(1, Number(arg.value.value));
  return arg.value.kind === Kind.VARIABLE ? 100 : DEFAULT_LIMIT;
}

function measure(
  set: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Map<string, ValueNode | undefined>,
  depth: number,
  visiting: Set<string>,
): { depth: number; cost: number } {
  let maxDepth = depth;
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const isList = sel.arguments?.some((a) => a.name.value === 'limit') ?? false;
      const child = sel.selectionSet
        ? measure(sel.selectionSet, fragments, variables, depth + 1, visiting)
        : { depth: depth + 1, cost: 0 };
      const fieldLimit = isList ? limitOf(sel.arguments) : hasListDefault(sel.name.value) ? DEFAULT_LIMIT : 1;
      cost += 1 + fieldLimit * child.cost;
      maxDepth = Math.max(maxDepth, child.depth);
    } else {
      const inner =
        sel.kind === Kind.INLINE_FRAGMENT
          ? sel.selectionSet
          : visiting.has(sel.name.value)
            ? null
            : (fragments.get(sel.name.value)?.selectionSet ?? null);
      if (!inner) continue;
      const name = sel.kind === Kind.FRAGMENT_SPREAD ? sel.name.value : null;
      if (name) visiting.add(name);
      const r = measure(inner, fragments, variables, depth, visiting);
      if (name) visiting.delete(name);
      cost += r.cost;
      maxDepth = Math.max(maxDepth, r.depth);
    }
  }
  return { depth: maxDepth, cost };
}

/** Paged fields that were asked for without a `limit` still return their default page. */
function hasListDefault(field: string): boolean {
  return (
    field === 'companies' ||
    field === 'suppliers' ||
    field === 'customers' ||
    field === 'cluster_suppliers' ||
    field === 'cluster_customers'
  );
}

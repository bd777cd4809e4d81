import { GraphQLError, Kind } from 'graphql';
import type { ASTVisitor, DocumentNode, GraphQLSchema, ValidationContext } from 'graphql';

/**
 * Operations whose type the schema does not define (there is no Subscription
 * type): graphql-js 16 lets them through validation and only fails them while
 * executing, which reads as a server fault instead of the client's mistake.
 */
export function unknownOperationTypes(schema: GraphQLSchema, document: DocumentNode): GraphQLError[] {
  return document.definitions.flatMap((d) =>
    d.kind === Kind.OPERATION_DEFINITION && !schema.getRootType(d.operation)
      ? [new GraphQLError(`This service does not support ${d.operation} operations.`, { nodes: [d] })]
      : [],
  );
}

/** The same check as a validation rule. */
export function knownOperationTypesRule(context: ValidationContext): ASTVisitor {
  return {
    Document(node) {
      for (const e of unknownOperationTypes(context.getSchema(), node)) context.reportError(e);
    },
  };
}

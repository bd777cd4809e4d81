import { GraphQLError } from 'graphql';
import type { ASTVisitor, ValidationContext } from 'graphql';

/**
 * Refuses an operation whose type the schema does not define (there is no
 * Subscription type): graphql-js 16 lets it through validation and only fails
 * it while executing, which reads as a server fault instead of the client's.
 */
export function knownOperationTypesRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (!context.getSchema().getRootType(node.operation)) {
        context.reportError(
          new GraphQLError(`This service does not support ${node.operation} operations.`, { nodes: [node] }),
        );
      }
    },
  };
}

import type { Request } from 'express';
import type { DocumentNode } from 'graphql';

/** What a REST route needs: a way to run its operation for this request, and link settings. */
export interface RestDeps {
  run(
    document: DocumentNode,
    variables: Record<string, unknown>,
    req: Request,
  ): Promise<Record<string, unknown>>;
  publicUrl: string | undefined;
  /** The largest offset a page may start at (MAX_OFFSET): no link points past it. */
  maxOffset: number;
}

import { Kind, parse, visit } from 'graphql';
import type { FieldDefinitionNode, ValueNode } from 'graphql';
import { PAGE_DEFAULTS } from '../../src/domain/params';
import { loadTypeDefs } from '../../src/graphql/schema';

/** Every field of the SDL that takes a page: its `limit` and `offset` defaults as written. */
function pageFields(): { field: string; limit: string | null; offset: string | null }[] {
  const out: { field: string; limit: string | null; offset: string | null }[] = [];
  const literal = (v: ValueNode | undefined) => (v && v.kind === Kind.INT ? v.value : null);
  for (const sdl of loadTypeDefs()) {
    visit(parse(sdl), {
      FieldDefinition(node: FieldDefinitionNode) {
        const arg = (name: string) => node.arguments?.find((a) => a.name.value === name);
        if (!arg('offset')) return;
        out.push({
          field: node.name.value,
          limit: literal(arg('limit')?.defaultValue),
          offset: literal(arg('offset')?.defaultValue),
        });
      },
    });
  }
  return out;
}

describe('page defaults', () => {
  // SDL cannot read a constant, so the defaults it states are held to PAGE_DEFAULTS here.
  it('the GraphQL schema states the same limit and offset defaults as the services', () => {
    const fields = pageFields();
    expect(fields.length).toBeGreaterThanOrEqual(10);
    for (const f of fields) {
      expect({ field: f.field, limit: f.limit, offset: f.offset }).toEqual({
        field: f.field,
        limit: String(PAGE_DEFAULTS.limit),
        offset: String(PAGE_DEFAULTS.offset),
      });
    }
  });
});

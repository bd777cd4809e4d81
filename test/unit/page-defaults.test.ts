import { Kind, parse, visit } from 'graphql';
import type { FieldDefinitionNode, ValueNode } from 'graphql';
import { PAGE_DEFAULTS } from '../../src/domain/params';
import { loadTypeDefs } from '../../src/graphql/schema';
import { SUGGEST_DEFAULT_LIMIT } from '../../src/services/companies.service';
import { PATH_DEFAULTS } from '../../src/services/paths.service';
import { TIER_MAP_LIMITS } from '../../src/services/tiermap.service';

/** The default the SDL states for `arg` of root field `field`, as written (null: none). */
function sdlDefault(field: string, arg: string): string | null | undefined {
  let found: string | null | undefined;
  for (const sdl of loadTypeDefs()) {
    visit(parse(sdl), {
      FieldDefinition(node: FieldDefinitionNode) {
        if (node.name.value !== field) return;
        const a = node.arguments?.find((x) => x.name.value === arg);
        if (a) found = a.defaultValue?.kind === Kind.INT ? a.defaultValue.value : null;
      },
    });
  }
  return found;
}

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

  it('the GraphQL schema states the same suggestion and path defaults as the services', () => {
    expect(sdlDefault('suggest_companies', 'limit')).toBe(String(SUGGEST_DEFAULT_LIMIT));
    expect(sdlDefault('paths', 'limit')).toBe(String(PATH_DEFAULTS.limit));
    // The service lowers the default hops to MAX_TIERS; a number in the SDL could not follow it.
    expect(sdlDefault('paths', 'max_tiers')).toBeNull();
  });

  it('the GraphQL schema states the same tier map defaults as the service', () => {
    expect(sdlDefault('tierMap', 'tiers')).toBe(String(TIER_MAP_LIMITS.defaultTiers));
    expect(sdlDefault('tierMap', 'per_node')).toBe(String(TIER_MAP_LIMITS.defaultPerNode));
    expect(sdlDefault('tierMap', 'max_nodes')).toBe(String(TIER_MAP_LIMITS.defaultNodes));
  });
});

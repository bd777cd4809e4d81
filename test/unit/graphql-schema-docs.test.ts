import { isEnumType, isInputObjectType, isObjectType } from 'graphql';
import { buildSchema } from '../../src/graphql/schema';

/**
 * What the explorer shows an analyst beside each field and argument comes from the schema's
 * descriptions: every argument has one (limits and filter meanings live there), and so do every
 * type and every field.
 */
describe('the GraphQL schema documents itself', () => {
  const schema = buildSchema();
  const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__'));

  it('describes every argument', () => {
    const bare: string[] = [];
    for (const t of types) {
      if (!isObjectType(t)) continue;
      for (const f of Object.values(t.getFields())) {
        for (const a of f.args) if (!a.description) bare.push(`${t.name}.${f.name}(${a.name})`);
      }
    }
    expect(bare).toEqual([]);
  });

  it('describes every type, input and enum of its own, and each of their fields', () => {
    const bare: string[] = [];
    for (const t of types) {
      if (!isObjectType(t) && !isInputObjectType(t) && !isEnumType(t)) continue;
      if (!t.description) bare.push(t.name);
      const fields = isEnumType(t) ? [] : Object.values(t.getFields());
      for (const f of fields as { name: string; description?: string | null }[]) {
        if (!f.description) bare.push(`${t.name}.${f.name}`);
      }
    }
    expect(bare).toEqual([]);
  });
});

import { isInputObjectType, isObjectType } from 'graphql';
import { buildSchema } from '../../src/graphql/schema';

/**
 * What the explorer shows an analyst beside each field and argument comes from the schema's
 * descriptions: every argument has one (limits and filter meanings live there), and so does every
 * field of the types a first query meets.
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

  it('describes the root types, the company, the edge and the evidence, and each of their fields', () => {
    const bare: string[] = [];
    for (const name of ['Query', 'Mutation', 'Company', 'Edge', 'Evidence', 'TierViewInput']) {
      const t = schema.getType(name);
      if (!t?.description) bare.push(name);
      const fields = t && (isObjectType(t) || isInputObjectType(t)) ? Object.values(t.getFields()) : [];
      for (const f of fields as { name: string; description?: string | null }[]) {
        if (!f.description) bare.push(`${name}.${f.name}`);
      }
    }
    expect(bare).toEqual([]);
  });
});
